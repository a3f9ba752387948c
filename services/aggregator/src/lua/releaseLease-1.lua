--[[
  releaseLease: gives up a lease if the caller still holds it, so another replica can take it at once instead of
  waiting for it to expire; a lease another replica took meanwhile is left alone.

  KEYS[1]  the lease key
  ARGV[1]  the caller's id

  Returns 1 when the lease was released, 0 when the caller did not hold it.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
