--[[
leaseRelease: deletes a lease, only for its holder (compare and delete).

KEYS[1]  the lease
ARGV[1]  the holder's token

Returns  1 released; 0 not held by this token.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
