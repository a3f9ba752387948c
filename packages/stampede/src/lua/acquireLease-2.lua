--[[
  Tries to take the lease that guards the load of one cache key, and reads the key in the same step, so the
  new holder can see whether another agent filled it in the meantime (the dogpile double-check).

  KEYS[1]  the cache key
  KEYS[2]  its lease key (names.leaseKey(KEYS[1]), in the same Cluster slot)
  ARGV[1]  the owner token
  ARGV[2]  the lease time to live, in ms
  ARGV[3]  '1' to peek first: when the cache key holds a value, return it and leave the lease alone

  Returns {2, value} when peeking found a value; {1, value or false} when the lease was taken;
  {0, remaining lease ms} when another owner holds it.
]]
if ARGV[3] == '1' then
  local value = redis.call('GET', KEYS[1])
  if value then return {2, value} end
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('GET', KEYS[1])}
end
return {0, redis.call('PTTL', KEYS[2])}
