--[[
  A SET through an agent: writes the key and breaks any lease on it in one step, so a load in flight when the
  write happens can no longer fill the key (see fillLease-2.lua). Agents waiting on that lease are told.

  KEYS[1]  the cache key
  KEYS[2]  its lease key
  ARGV[1]  the fill channel; '' when the caller announces on a control Redis itself
  ARGV[2]  the message telling waiting agents (the cache key, as the application names it)
  ARGV[3], ARGV[4], ...  the SET arguments after the key, as ioredis takes them: value [EX s | PX ms | ...] [NX | XX] [GET] ...

  Returns {reply, broken}: what SET returns (OK, nil when a condition was not met, or the old value with GET),
  and 1 when a lease was broken, else 0.
]]
local reply = redis.call('SET', KEYS[1], unpack(ARGV, 3))
local broken = redis.call('DEL', KEYS[2])
if broken == 1 and ARGV[1] ~= '' then redis.call('PUBLISH', ARGV[1], ARGV[2]) end
return {reply, broken}
