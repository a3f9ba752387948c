--[[
saddShard: adds members to one shard of a split set, unless the shard's gate is closed.

KEYS[1]  the shard (a set)
KEYS[2]  the shard's gate (a string "state:target:seq:moved"; an empty state, or no gate, means open)
ARGV     the members

Returns  {0, number of members new to this shard} when applied; {1, target} when the gate is closed.
]]
local gate = redis.call('GET', KEYS[2])
if gate then
  local state, target = string.match(gate, '^(%a*):(%d*):')
  if state ~= '' then return {1, tonumber(target)} end
end
return {0, redis.call('SADD', KEYS[1], unpack(ARGV))}
