--[[
sealShard: closes a shard to writes so that it can be drained into the base key; idempotent.

KEYS[1]  the shard
KEYS[2]  the shard's gate, a string "state:target:seq:moved": state '' (open), 'sealed' (being drained) or
         'merged' (drained by a fold or reshard, closed); target, the split factor writes go to while closed;
         seq, the number of drains so far; moved, '<seq>/<value>' of the last finished counter drain, or ''
ARGV[1]  the split factor writes go to while the shard is closed (1: the base key)

Returns  {state, seq, type, value, target}:
         state 'merged' when the shard was already drained and holds nothing (nothing to do);
         otherwise 'sealed', with `seq` the drain's sequence number (a new one, or the one of a drain already
         under way, which the caller then finishes), the Redis type of the shard, for a string its value, and
         the split factor the closed gate sends writes to (ARGV[1], or the one a drain under way sealed it with).

The gate's seq only grows, so a counter move added to the base key can always be matched with the shard state a
reader saw (see applyCounterMove-2.lua). The gate loses any expiry while sealed.
]]
local gate = redis.call('GET', KEYS[2]) or ':::'
local state, target, seq, moved = string.match(gate, '^(%a*):(%d*):(%d*):(.*)$')
seq = tonumber(seq) or 0
local kind = redis.call('TYPE', KEYS[1])['ok']
if state == 'merged' and kind == 'none' then return {'merged', seq, kind, false} end
if state ~= 'sealed' then
  seq = seq + 1
  target = ARGV[1]
  redis.call('SET', KEYS[2], 'sealed:' .. target .. ':' .. seq .. ':' .. moved)
end
local value = false
if kind == 'string' then value = redis.call('GET', KEYS[1]) end
return {'sealed', seq, kind, value, tonumber(target) or 1}
