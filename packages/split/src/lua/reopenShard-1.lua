--[[
reopenShard: opens a shard that an earlier fold left closed, when its key is split again with the same factor.

KEYS[1]  the shard's gate (a string "state:target:seq:moved", see sealShard-2.lua)

Returns  1 when reopened; 0 when the gate was open already or a drain is under way (a sealed shard is never
         reopened here: its drain finishes it).
]]
local gate = redis.call('GET', KEYS[1])
if not gate then return 0 end
local state, target, seq, moved = string.match(gate, '^(%a*):(%d*):(%d*):(.*)$')
if state ~= 'merged' then return 0 end
redis.call('SET', KEYS[1], '::' .. seq .. ':' .. moved)
return 1
