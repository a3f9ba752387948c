--[[
setCopy: writes one copy of a split read-mostly value, if the write is newer than what the copy holds.

KEYS[1]  the copy (hash: `v` value, `s` stamp, `a` agent id of the stamp; no `v` = deleted)
KEYS[2]  the copy's gate (a string "state:target:seq:moved"; an empty state, or no gate, means open)
ARGV[1]  'set' or 'del'
ARGV[2]  the value ('' for del)
ARGV[3]  the write's stamp (an integer, increasing per agent)
ARGV[4]  the writing agent's id (breaks ties between equal stamps)
ARGV[5]  absolute expiry in Unix milliseconds, or 0 for none

Returns  {0, 1} written; {0, 0} ignored because the copy holds a newer write; {1, target} gate closed.

Last write wins by (stamp, agent), so concurrent writers that reach the copies in different orders still leave
every copy with the same value.
]]
local gate = redis.call('GET', KEYS[2])
if gate then
  local state, target = string.match(gate, '^(%a*):(%d*):')
  if state ~= '' then return {1, tonumber(target)} end
end
local held = redis.call('HMGET', KEYS[1], 's', 'a')
local stamp = tonumber(ARGV[3])
if held[1] then
  local heldStamp = tonumber(held[1])
  if heldStamp > stamp or (heldStamp == stamp and held[2] >= ARGV[4]) then return {0, 0} end
end
if ARGV[1] == 'set' then
  redis.call('HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3], 'a', ARGV[4])
else
  redis.call('HSET', KEYS[1], 's', ARGV[3], 'a', ARGV[4])
  redis.call('HDEL', KEYS[1], 'v')
end
if ARGV[5] ~= '0' then
  redis.call('PEXPIREAT', KEYS[1], ARGV[5])
else
  redis.call('PERSIST', KEYS[1])
end
return {0, 1}
