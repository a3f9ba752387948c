--[[
leaseRenew: extends a lease, only for its holder.

KEYS[1]  the lease
ARGV[1]  the holder's token
ARGV[2]  the new lifetime in milliseconds

Returns  1 extended; 0 not held by this token (expired, or taken by another).
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
