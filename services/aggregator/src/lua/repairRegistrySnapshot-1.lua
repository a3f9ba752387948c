--[[
  repairRegistrySnapshot: replaces a registry snapshot hash that no replica wrote (a version that is not an
  integer, or one ahead of Postgres), but only if it still holds what the caller found, so a replica's
  legitimate publish in between is never overwritten.

  KEYS[1]  the registry snapshot hash (fields `version`, `snapshot`)
  ARGV[1]  the `version` field as the caller read it
  ARGV[2]  the registry version in Postgres, read after that
  ARGV[3]  the encoded RegistrySnapshot of that version

  Returns 1 when the hash was replaced, 0 when it had changed meanwhile.
]]
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'snapshot', ARGV[3])
return 1
