--[[
  A DEL through an agent: deletes the key and breaks any lease on it in one step, so a load in flight when the
  delete happens can no longer fill the key (see fillLease-2.lua). Agents waiting on that lease are told.

  KEYS[1]  the cache key
  KEYS[2]  its lease key
  ARGV[1]  the fill channel
  ARGV[2]  the message telling waiting agents (the cache key, as the application names it)

  Returns the number of keys deleted (0 or 1), as DEL does; the lease is not counted.
]]
local deleted = redis.call('DEL', KEYS[1])
if redis.call('DEL', KEYS[2]) == 1 then redis.call('PUBLISH', ARGV[1], ARGV[2]) end
return deleted
