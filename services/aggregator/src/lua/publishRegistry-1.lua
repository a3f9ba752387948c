--[[
  Publishes registry events that are newer than what Redis already has, and moves the snapshot forward.
  Atomic, so replicas flushing at the same time never publish a version twice or move the snapshot back.

  KEYS[1]  the registry snapshot hash (fields `version`, `snapshot`)
  ARGV[1]  the snapshot's registry version
  ARGV[2]  the encoded RegistrySnapshot of that version
  ARGV[3]  the registry channel
  ARGV[4], ARGV[5], ...  pairs of event version and encoded RegistryEvent, in increasing version order

  Returns the versions it published, in order (empty when another replica was ahead).
]]
local stored = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local last = stored
local published = {}
for i = 4, #ARGV - 1, 2 do
  local version = tonumber(ARGV[i])
  if version > last then
    redis.call('PUBLISH', ARGV[3], ARGV[i + 1])
    published[#published + 1] = version
    last = version
  end
end

-- The snapshot's version is at least that of every event passed, so it never lags what was just published.
if tonumber(ARGV[1]) > stored then
  redis.call('HSET', KEYS[1], 'version', ARGV[1], 'snapshot', ARGV[2])
end
return published
