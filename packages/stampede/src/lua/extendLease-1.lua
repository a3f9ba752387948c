--[[
  Extends a lease, only while the caller still owns it (compare-and-pexpire).

  KEYS[1]  the lease key
  ARGV[1]  the owner token
  ARGV[2]  the new time to live, in ms

  Returns 1 when extended, 0 when the lease has expired or belongs to another owner.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
