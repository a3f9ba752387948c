--[[
applyReport: folds one agent's cumulative counts for one window-shard into the cluster-wide sums, idempotently.

KEYS[1]   the window-shard counters hash (names.windowCountersKey)
ARGV[1]   agent id (printable ASCII, no spaces: field names below rely on it)
ARGV[2]   hot threshold: requests per window at which a key is promoted
ARGV[3]   the hash's lifetime in milliseconds
ARGV[4]   warm floor: a key this report takes to at least this (but below the threshold) is returned too, so
          the caller can judge it over a sliding second rather than this window alone
ARGV[5..] groups of four: key, count, writes, misses (cumulative for the window, as this agent reported them)

Returns   a flat array, groups of five, for the keys whose cluster-wide count crossed the threshold with this
          report (crossed = 1) or rose to the warm floor or above without crossing (crossed = 0):
          key, count, writes, misses (the new sums), crossed

Fields, all plain integers:
  <agent>\n<key>        the agent's largest count        \n<key>       the cluster-wide count
  ' w'<agent>\n<key>    the agent's largest writes       ' w\n'<key>   the cluster-wide writes
  ' m'<agent>\n<key>    the agent's largest misses       ' m\n'<key>   the cluster-wide misses
Counts are cumulative within a window, so for each agent and key only the largest value seen is kept and only
its increase is added to the sums: a report applied twice, or after a later one, adds nothing.

Cost is what bounds ingest, so: hash reads and writes are batched (HMGET/HSET), values are bare integers
(tonumber/tostring, no pattern matching), and writes and misses, zero for most keys, are only touched when the
report carries some.
]]
local hash = KEYS[1]
local agent = ARGV[1]
local threshold = tonumber(ARGV[2])
local warm = tonumber(ARGV[4])
local FIRST = 5
local groups = (#ARGV - FIRST + 1) / 4

-- unpack() is bounded by the Lua C stack (about 8000 values), so long argument lists go in chunks.
local CHUNK = 1000

local function hmget(names)
  local out = {}
  for first = 1, #names, CHUNK do
    local last = math.min(first + CHUNK - 1, #names)
    local got = redis.call('HMGET', hash, unpack(names, first, last))
    for j = 1, #got do out[first + j - 1] = got[j] end
  end
  return out
end

local function hset(pairs)
  for first = 1, #pairs, 2 * CHUNK do
    local last = math.min(first + 2 * CHUNK - 1, #pairs)
    redis.call('HSET', hash, unpack(pairs, first, last))
  end
end

-- Field names to read: count (agent, sum) for every key; writes and misses (agent, sum) only where reported.
local fields = {}
local extra = {} -- per group: index in fields of its ' w' agent field, or nil; same for ' m'
for i = 1, groups do
  local base = FIRST + 4 * (i - 1)
  local key = ARGV[base]
  fields[#fields + 1] = agent .. '\n' .. key
  fields[#fields + 1] = '\n' .. key
  local slots = {}
  if ARGV[base + 2] ~= '0' then
    slots.w = #fields + 1
    fields[#fields + 1] = ' w' .. agent .. '\n' .. key
    fields[#fields + 1] = ' w\n' .. key
  end
  if ARGV[base + 3] ~= '0' then
    slots.m = #fields + 1
    fields[#fields + 1] = ' m' .. agent .. '\n' .. key
    fields[#fields + 1] = ' m\n' .. key
  end
  extra[i] = slots
end
local values = hmget(fields)

local updates, crossed = {}, {}
local position = 1
for i = 1, groups do
  local base = FIRST + 4 * (i - 1)
  local previous = tonumber(values[position] or 0)
  local sum = tonumber(values[position + 1] or 0)
  local count = tonumber(ARGV[base + 1])
  local newSum = sum
  if count > previous then
    newSum = sum + count - previous
    updates[#updates + 1] = fields[position]
    updates[#updates + 1] = count
    updates[#updates + 1] = fields[position + 1]
    updates[#updates + 1] = newSum
  end
  local sums = { w = 0, m = 0 }
  for kind, offset in pairs({ w = 2, m = 3 }) do
    local at = extra[i][kind]
    if at then
      local mine = tonumber(values[at] or 0)
      local total = tonumber(values[at + 1] or 0)
      local reported = tonumber(ARGV[base + offset])
      if reported > mine then
        total = total + reported - mine
        updates[#updates + 1] = fields[at]
        updates[#updates + 1] = reported
        updates[#updates + 1] = fields[at + 1]
        updates[#updates + 1] = total
      end
      sums[kind] = total
    end
  end
  if sum < threshold and newSum >= warm and newSum > sum then
    crossed[#crossed + 1] = ARGV[base]
    crossed[#crossed + 1] = newSum
    -- The writes and misses sums are reported even when this report carried none.
    crossed[#crossed + 1] = extra[i].w and sums.w or tonumber(redis.call('HGET', hash, ' w\n' .. ARGV[base]) or 0)
    crossed[#crossed + 1] = extra[i].m and sums.m or tonumber(redis.call('HGET', hash, ' m\n' .. ARGV[base]) or 0)
    crossed[#crossed + 1] = newSum >= threshold and 1 or 0
  end
  position = position + 2 + (extra[i].w and 2 or 0) + (extra[i].m and 2 or 0)
end
if #updates > 0 then hset(updates) end
redis.call('PEXPIRE', hash, ARGV[3])
return crossed
