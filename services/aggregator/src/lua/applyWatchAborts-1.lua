--[[
applyWatchAborts: folds one agent's transactions aborted by WATCH, per key, into a window-shard's sums, idempotently.

KEYS[1]   the window-shard counters hash (names.windowCountersKey), shared with applyReport
ARGV[1]   agent id
ARGV[2]   the hash's lifetime in milliseconds
ARGV[3..] pairs: key, aborted transactions (for the window, as this agent reported them)

Returns   nothing

Fields, plain integers beside applyReport's:
  ' x'<agent>\n<key>    the agent's largest count        ' x\n'<key>   the cluster-wide sum
Like applyReport, only the increase over the agent's largest is added: a report applied twice adds nothing.
]]
local hash = KEYS[1]
local agent = ARGV[1]
for i = 3, #ARGV, 2 do
  local key = ARGV[i]
  local reported = tonumber(ARGV[i + 1])
  local mine = ' x' .. agent .. '\n' .. key
  local before = tonumber(redis.call('HGET', hash, mine) or 0)
  if reported > before then
    redis.call('HSET', hash, mine, reported)
    redis.call('HINCRBY', hash, ' x\n' .. key, reported - before)
  end
end
redis.call('PEXPIRE', hash, ARGV[2])
return nil
