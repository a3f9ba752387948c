--[[
  Stores a loaded value and releases the lease in one step, only while the loader still owns the lease and
  the key still holds what it held when the lease was taken. A lease that ran out may have passed to another
  loader, and any client's write (through an agent, redis-cli, any command) changes the key's value: either
  way this fill is refused, so a load that started before a write never overwrites it. Comparing the value
  rather than relying on writers to break the lease is what lets plain SETs stay plain commands.

  KEYS[1]  the cache key
  KEYS[2]  its lease key
  ARGV[1]  the owner token
  ARGV[2]  the value (an envelope)
  ARGV[3]  the value's time to live, in ms
  ARGV[4]  the fill channel; '' when the caller announces on a control Redis itself
  ARGV[5]  the message announcing the fill (the cache key, as the application names it)
  ARGV[6]  SHA-1 (hex) of the key's value when the lease was taken, '' when it was absent

  Returns 1 when stored (the lease released), 0 when the lease was no longer the caller's, 2 when the key was
  written meanwhile (nothing stored, the lease released). The end of a released lease is announced.
]]
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local current = redis.call('GET', KEYS[1])
local digest = ''
if current then digest = redis.sha1hex(current) end
if digest ~= ARGV[6] then
  redis.call('DEL', KEYS[2])
  if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
  return 2
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('DEL', KEYS[2])
if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
return 1
