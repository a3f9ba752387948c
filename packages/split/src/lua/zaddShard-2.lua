--[[
zaddShard: sets members' scores in their home shard of a split sorted set, unless the shard's gate is closed.

KEYS[1]  the shard (a sorted set)
KEYS[2]  the shard's gate (a string "state:target:seq:moved"; an empty state, or no gate, means open)
ARGV     score, member, score, member, ...

Returns  {0, number of members new to this shard} when applied; {1, target} when the gate is closed.

When the gate is closed the members are also removed from this shard: the caller writes them to `target`, and
no older score may stay behind in a shard that readers rank above the base key.
]]
local gate = redis.call('GET', KEYS[2])
if gate then
  local state, target = string.match(gate, '^(%a*):(%d*):')
  if state ~= '' then
    for i = 2, #ARGV, 2 do redis.call('ZREM', KEYS[1], ARGV[i]) end
    return {1, tonumber(target)}
  end
end
return {0, redis.call('ZADD', KEYS[1], unpack(ARGV))}
