--[[
clearMoved: forgets the value a finished counter drain moved, once no reader can need it.

KEYS[1]  the shard's gate (a string "state:target:seq:moved", see sealShard-2.lua)
ARGV[1]  the drain's sequence number

Returns  1 when the gate no longer records a move under that sequence number (cleared now, or overwritten by a
         later drain, or the gate expired); 0 when the drain is still sealed (not finished: keep everything).
]]
local gate = redis.call('GET', KEYS[1])
if not gate then return 1 end
local state, target, seq, moved = string.match(gate, '^(%a*):(%d*):(%d*):(.*)$')
if state == 'sealed' and tonumber(seq) == tonumber(ARGV[1]) then return 0 end
if string.sub(moved, 1, #ARGV[1] + 1) == ARGV[1] .. '/' then
  redis.call('SET', KEYS[1], state .. ':' .. target .. ':' .. seq .. ':', 'KEEPTTL')
end
return 1
