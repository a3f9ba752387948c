--[[
finishShard: ends a drain once the shard's content is in the base key: deletes the shard, and either reopens
the gate (a rebalance) or leaves it closed, pointing writers at the new layout (a fold or reshard).

KEYS[1]  the shard
KEYS[2]  the shard's gate (a string "state:target:seq:moved", see sealShard-2.lua)
ARGV[1]  the drain's sequence number (from sealShard)
ARGV[2]  'open' or 'merged'
ARGV[3]  for 'merged': how long the closed gate is kept, in milliseconds (writers that lag longer are not redirected)
ARGV[4]  for a counter, the value the drain moved into the base key; '' otherwise

Returns  1 when finished; 0 when the gate is not sealed under that sequence number (someone else finished it).

A counter's gate keeps moved = '<seq>/<value>' after the shard is deleted: a reader whose base-key read came
before the move was added, and whose shard read came after this, would otherwise miss the value (see
counter.ts). The journal collector clears it before it deletes the move's journal entry (journal.ts).
]]
local gate = redis.call('GET', KEYS[2]) or ':::'
local state, target, seq, moved = string.match(gate, '^(%a*):(%d*):(%d*):(.*)$')
if state ~= 'sealed' or tonumber(seq) ~= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[4] ~= '' and ARGV[4] ~= '0' then moved = seq .. '/' .. ARGV[4] else moved = '' end
if ARGV[2] == 'open' then
  redis.call('SET', KEYS[2], '::' .. seq .. ':' .. moved)
else
  redis.call('SET', KEYS[2], 'merged:' .. target .. ':' .. seq .. ':' .. moved, 'PX', ARGV[3])
end
return 1
