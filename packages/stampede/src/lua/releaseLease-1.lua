--[[
  Releases a lease, only while the caller still owns it (compare-and-delete): a lease that outlived its time
  to live and was taken by another owner is left alone. Announces the release so waiting agents retry at once.

  KEYS[1]  the lease key
  ARGV[1]  the owner token
  ARGV[2]  the fill channel; '' when the caller announces on a control Redis itself
  ARGV[3]  the cache key the lease guards (the message)

  Returns 1 when released, 0 when the caller no longer owned it.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
  return 1
end
return 0
