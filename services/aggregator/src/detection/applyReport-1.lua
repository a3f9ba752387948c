--[[
applyReport: folds one agent's cumulative counts for one window-shard into the cluster-wide sums, idempotently.

KEYS[1]   the window-shard counters hash (names.windowCountersKey)
ARGV[1]   agent id (printable ASCII, no spaces: field names below rely on it)
ARGV[2]   hot threshold: requests per window at which a key is promoted
ARGV[3]   the hash's lifetime in milliseconds
ARGV[4]   warm floor: a key this report takes to at least this (but below the threshold) is returned too, so
          the caller can judge it over a sliding second rather than this window alone
ARGV[5]   agents reporting (the fleet's size as the control plane knows it)
ARGV[6]   the report floor agents were told: an agent that did not report a key saw it fewer times than this
ARGV[7]   miss floor: a key whose cluster-wide misses this report takes to at least this is returned too, for the
          miss-storm watch (0: none asked)
ARGV[8..] groups of five: key, count, writes, misses (cumulative for the window, as this agent reported them),
          forms (the command forms seen on the key, a bitmask; 0 for none)

Returns   two flat arrays. The first, groups of five, for the keys whose cluster-wide count crossed the threshold
          with this report (crossed = 1), rose to the warm floor or above without crossing (crossed = 0), or
          stayed below both but could still be at the threshold once the agents that did not report it are
          counted (crossed = 2: watch it): key, count, writes, misses (the new sums), crossed. The second, pairs,
          for the keys whose cluster-wide misses are at the miss floor: key, misses (the new sum). Pairs, since a
          report has dozens of such keys when many miss and the watch needs nothing else of them.

Watching: a key below the threshold may be hot cluster-wide yet spread so thinly that most agents saw it fewer
than floor times and did not report it. Its true sum is at most sum + (agents - reporters) x (floor - 1), the
upper bound of distributed top-k (TPUT, Cao and Wang 2004). Reporters are counted in ' r\n'<key> only for keys
whose bound with a single reporter reaches the threshold, so the count is a lower bound (the key may have
been reported before it qualified) and the bound stays an upper bound.

Fields, all plain integers:
  <agent>\n<key>        the agent's largest count        \n<key>       the cluster-wide count
  ' w'<agent>\n<key>    the agent's largest writes       ' w\n'<key>   the cluster-wide writes
  ' m'<agent>\n<key>    the agent's largest misses       ' m\n'<key>   the cluster-wide misses
  ' r\n'<key>           agents that reported the key (see Watching)
  ' f\n'<key>           the command forms every agent reported on the key in the window, OR-ed (idempotent too)
  ' a'<agent>           1 once the agent reported in this window ' agents'    agents that reported in it
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
local agents = tonumber(ARGV[5])
local slack = tonumber(ARGV[6]) - 1
local missFloor = tonumber(ARGV[7])
local FIRST = 8
local groups = (#ARGV - FIRST + 1) / 5

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
-- Per-key positions live in flat arrays, not a table per key: allocation is most of this script's cost.
local fields = {}
local at, wAt, mAt, fAt = {}, {}, {}, {}
for i = 1, groups do
  local base = FIRST + 5 * (i - 1)
  local key = ARGV[base]
  local n = #fields
  at[i] = n + 1
  fields[n + 1] = agent .. '\n' .. key
  fields[n + 2] = '\n' .. key
  n = n + 2
  if ARGV[base + 2] ~= '0' then
    wAt[i] = n + 1
    fields[n + 1] = ' w' .. agent .. '\n' .. key
    fields[n + 2] = ' w\n' .. key
    n = n + 2
  end
  if ARGV[base + 3] ~= '0' then
    mAt[i] = n + 1
    fields[n + 1] = ' m' .. agent .. '\n' .. key
    fields[n + 2] = ' m\n' .. key
    n = n + 2
  end
  if ARGV[base + 4] ~= '0' then
    fAt[i] = n + 1
    fields[n + 1] = ' f\n' .. key
  end
end
local values = hmget(fields)

local updates, crossed, atFloor = {}, {}, {}
local u = 0

-- Keeps the larger of the agent's previous and reported value at fields[p]; returns the new cluster-wide sum.
local function fold(p, reported)
  local mine = tonumber(values[p] or 0)
  local total = tonumber(values[p + 1] or 0)
  if reported > mine then
    total = total + reported - mine
    updates[u + 1] = fields[p]
    updates[u + 2] = reported
    updates[u + 3] = fields[p + 1]
    updates[u + 4] = total
    u = u + 4
  end
  return total
end

if redis.call('HSETNX', hash, ' a' .. agent, 1) == 1 then redis.call('HINCRBY', hash, ' agents', 1) end

for i = 1, groups do
  local base = FIRST + 5 * (i - 1)
  local p = at[i]
  local sum = tonumber(values[p + 1] or 0)
  local first = values[p] == false or values[p] == nil
  local newSum = fold(p, tonumber(ARGV[base + 1]))
  local writes = wAt[i] and fold(wAt[i], tonumber(ARGV[base + 2]))
  local misses = mAt[i] and fold(mAt[i], tonumber(ARGV[base + 3]))
  if fAt[i] then
    local seen = tonumber(values[fAt[i]] or 0)
    local forms = bit.bor(seen, tonumber(ARGV[base + 4]))
    if forms ~= seen then
      updates[u + 1] = fields[fAt[i]]
      updates[u + 2] = forms
      u = u + 2
    end
  end
  if misses and missFloor > 0 and misses >= missFloor then
    atFloor[#atFloor + 1] = ARGV[base]
    atFloor[#atFloor + 1] = misses
  end
  if sum < threshold and newSum >= warm and newSum > sum then
    local key = ARGV[base]
    local n = #crossed
    crossed[n + 1] = key
    crossed[n + 2] = newSum
    -- The writes and misses sums are reported even when this report carried none.
    crossed[n + 3] = writes or tonumber(redis.call('HGET', hash, ' w\n' .. key) or 0)
    crossed[n + 4] = misses or tonumber(redis.call('HGET', hash, ' m\n' .. key) or 0)
    crossed[n + 5] = newSum >= threshold and 1 or 0
  elseif newSum < warm and slack > 0 and newSum + (agents - 1) * slack >= threshold then
    local key = ARGV[base]
    local reporters
    if first then
      reporters = redis.call('HINCRBY', hash, ' r\n' .. key, 1)
    else
      reporters = tonumber(redis.call('HGET', hash, ' r\n' .. key) or 1)
    end
    if newSum + math.max(0, agents - reporters) * slack >= threshold then
      local n = #crossed
      crossed[n + 1] = key
      crossed[n + 2] = newSum
      crossed[n + 3] = writes or 0
      crossed[n + 4] = misses or 0
      crossed[n + 5] = 2
    end
  end
end
if #updates > 0 then hset(updates) end
redis.call('PEXPIRE', hash, ARGV[3])
return {crossed, atFloor}
