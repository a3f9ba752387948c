--[[
applyRates: folds one agent's measured rates (a partial report's `rates`) into a window-shard and returns the keys
whose cluster-wide rate, the sum of every agent's latest, reached the hot threshold with this report.

KEYS[1]   the window-shard counters hash (names.windowCountersKey), the one applyReport-1.lua keeps
ARGV[1]   agent id
ARGV[2]   hot threshold in requests per second
ARGV[3]   the hash's lifetime in milliseconds
ARGV[4..] pairs: key, requests per second as the agent measured it last

Returns   a flat array, groups of five, for each key whose summed rate crossed the threshold with this report:
          key, summed rate, and the window's cluster-wide count, writes and misses so far (0 when absent)

Fields: ' s'<agent>\n<key> the agent's latest rate, ' s\n'<key> their sum. A rate replaces the agent's previous
one (rates fall as well as rise), so the sum is of each agent's latest; a replayed report changes nothing.
]]
local hash = KEYS[1]
local agent = ARGV[1]
local threshold = tonumber(ARGV[2])
local crossed = {}
for i = 4, #ARGV, 2 do
  local key = ARGV[i]
  local rate = tonumber(ARGV[i + 1])
  local mineField = ' s' .. agent .. '\n' .. key
  local sumField = ' s\n' .. key
  local got = redis.call('HMGET', hash, mineField, sumField)
  local mine = tonumber(got[1] or 0)
  local sum = tonumber(got[2] or 0)
  if rate ~= mine then
    local newSum = sum - mine + rate
    redis.call('HSET', hash, mineField, rate, sumField, newSum)
    if sum < threshold and newSum >= threshold then
      local counts = redis.call('HMGET', hash, '\n' .. key, ' w\n' .. key, ' m\n' .. key)
      local n = #crossed
      crossed[n + 1] = key
      crossed[n + 2] = newSum
      crossed[n + 3] = tonumber(counts[1] or 0)
      crossed[n + 4] = tonumber(counts[2] or 0)
      crossed[n + 5] = tonumber(counts[3] or 0)
    end
  end
end
redis.call('PEXPIRE', hash, ARGV[3])
return crossed
