--[[
  Stores a loaded value and releases the lease in one step, only while the loader still owns the lease. A
  write or delete through any agent breaks the lease first (setAndBreakLease, delAndBreakLease), and a lease
  that ran out may have passed to another loader: either way this fill is refused, so a load that started
  before a write never overwrites it.

  KEYS[1]  the cache key
  KEYS[2]  its lease key
  ARGV[1]  the owner token
  ARGV[2]  the value (an envelope)
  ARGV[3]  the value's time to live, in ms
  ARGV[4]  the fill channel
  ARGV[5]  the message announcing the fill (the cache key, as the application names it)

  Returns 1 when stored, 0 when the lease was no longer the caller's (nothing written).
]]
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
