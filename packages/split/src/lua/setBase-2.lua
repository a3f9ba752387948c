--[[
setBase: writes (or deletes) the base key of a split read-mostly value, if the write is newer than the last one.

KEYS[1]  the base key (the application's key, a string)
KEYS[2]  its stamp (hash: `s` stamp, `a` agent id), in the base key's slot
ARGV[1]  'set' or 'del'
ARGV[2]  the value ('' for del)
ARGV[3]  the write's stamp (an integer, increasing per agent)
ARGV[4]  the writing agent's id
ARGV[5]  absolute expiry of the value in Unix milliseconds, or 0 for none
ARGV[6]  how long the stamp is kept, in milliseconds

Returns  {1, existed} when applied (existed: 1 if the key held a value before); {0, 0} when a newer write won.
]]
local held = redis.call('HMGET', KEYS[2], 's', 'a')
local stamp = tonumber(ARGV[3])
if held[1] then
  local heldStamp = tonumber(held[1])
  if heldStamp > stamp or (heldStamp == stamp and held[2] >= ARGV[4]) then return {0, 0} end
end
local existed = redis.call('EXISTS', KEYS[1])
if ARGV[1] == 'set' then
  if ARGV[5] ~= '0' then
    redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[5])
  else
    redis.call('SET', KEYS[1], ARGV[2])
  end
else
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[2], 's', ARGV[3], 'a', ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return {1, existed}
