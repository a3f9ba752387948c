--[[
remShard: removes members from one shard of a split set or sorted set, whatever its gate says.

KEYS[1]  the shard (a set or sorted set)
KEYS[2]  the shard's gate (a string "state:target:seq:moved"; an empty state, or no gate, means open)
ARGV[1]  's' for a set, 'z' for a sorted set
ARGV[2..] the members

Returns  {target, flag, flag, ...}: target is the split factor writes go to when the gate is closed, else 0;
         one flag per member, 1 if it was removed from this shard.

Removals reach closed shards too: a shard that is being folded still holds members until the fold deletes it.
]]
local reply = {0}
local gate = redis.call('GET', KEYS[2])
if gate then
  local state, target = string.match(gate, '^(%a*):(%d*):')
  if state ~= '' then reply[1] = tonumber(target) end
end
local command = ARGV[1] == 's' and 'SREM' or 'ZREM'
for i = 2, #ARGV do reply[i] = redis.call(command, KEYS[1], ARGV[i]) end
return reply
