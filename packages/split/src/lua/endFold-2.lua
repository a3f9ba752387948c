--[[
endFold: ends a fold: releases the key's fold lease and forgets the touched set, only for the lease's holder.

KEYS[1]  the key's fold lease
KEYS[2]  the touched set
ARGV[1]  the holder's token

Returns  1 ended; 0 the lease is not held by this token (the touched set is then left for whoever holds it).
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
