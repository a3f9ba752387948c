--[[
  releaseLease: deletes a lease, only while the caller still holds it (compare-and-delete), so another can take
  it at once instead of waiting for it to expire; a lease that ran out and passed to another is left alone.

  KEYS[1]  the lease key
  ARGV[1]  the caller's token

  Returns 1 when released, 0 when the caller did not hold it.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
