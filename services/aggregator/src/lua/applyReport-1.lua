--[[
applyReport: folds one agent's cumulative counts for one window-shard into the cluster-wide sums, idempotently.

KEYS[1]   the window-shard counters hash (names.windowCountersKey)
ARGV[1]   agent id
ARGV[2]   hot threshold: requests per window at which a key is promoted
ARGV[3]   the hash's lifetime in milliseconds
ARGV[4..] groups of four: key, count, writes, misses (cumulative for the window, as this agent reported them)

Returns   a flat array, groups of four, for the keys whose cluster-wide count crossed the threshold with this
          report: key, count, writes, misses (the new sums)

Counts are cumulative within a window, so for each agent and key only the largest value seen is kept and only
its increase is added to the sums: a report applied twice, or after a later one, adds nothing.
Hash reads and writes are batched (HMGET/HSET) rather than issued per key: four calls per report, not nine per key.
]]
local hash = KEYS[1]
local agent = ARGV[1]
local threshold = tonumber(ARGV[2])
local groups = (#ARGV - 3) / 4

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

local function parse(value)
  if not value then return 0, 0, 0 end
  local c, w, m = string.match(value, '^(%d+) (%d+) (%d+)$')
  return tonumber(c), tonumber(w), tonumber(m)
end

local agentFields, sumFields = {}, {}
for i = 1, groups do
  local key = ARGV[4 * i]
  agentFields[i] = agent .. '\n' .. key
  sumFields[i] = '\n' .. key
end
local previous = hmget(agentFields)
local sums = hmget(sumFields)

local updates, crossed = {}, {}
for i = 1, groups do
  local base = 4 * i
  local pc, pw, pm = parse(previous[i])
  local c = math.max(tonumber(ARGV[base + 1]), pc)
  local w = math.max(tonumber(ARGV[base + 2]), pw)
  local m = math.max(tonumber(ARGV[base + 3]), pm)
  if c ~= pc or w ~= pw or m ~= pm then
    local sc, sw, sm = parse(sums[i])
    local nc, nw, nm = sc + c - pc, sw + w - pw, sm + m - pm
    updates[#updates + 1] = agentFields[i]
    updates[#updates + 1] = string.format('%d %d %d', c, w, m)
    updates[#updates + 1] = sumFields[i]
    updates[#updates + 1] = string.format('%d %d %d', nc, nw, nm)
    if sc < threshold and nc >= threshold then
      crossed[#crossed + 1] = ARGV[base]
      crossed[#crossed + 1] = nc
      crossed[#crossed + 1] = nw
      crossed[#crossed + 1] = nm
    end
  end
end
if #updates > 0 then hset(updates) end
redis.call('PEXPIRE', hash, ARGV[3])
return crossed
