--[[
incrShard: adds a delta to one shard of a split counter, unless the shard's gate is closed.

KEYS[1]  the shard (a string holding an integer)
KEYS[2]  the shard's gate (a string "state:target:seq:moved"; an empty state, or no gate, means open)
ARGV[1]  the delta, an integer

Returns  {0, the shard's new value} when applied; {1, target} when the gate is closed (nothing written: the
         caller writes to the layout of `target` shards instead, 1 meaning the base key);
         {-1} when the shard holds something that is not an integer.

The gate is read in the same script as the write, so once a fold has closed a gate no increment can land in the
shard: a writer that still believes the key is split is sent on to `target`.
]]
local gate = redis.call('GET', KEYS[2])
if gate then
  local state, target = string.match(gate, '^(%a*):(%d*):')
  if state ~= '' then return {1, tonumber(target)} end
end
local current = redis.call('GET', KEYS[1])
if current and not string.match(current, '^-?%d+$') then return {-1} end
return {0, redis.call('INCRBY', KEYS[1], ARGV[1])}
