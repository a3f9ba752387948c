--[[
  A DEL through an agent, of one key or several: deletes the keys and breaks any lease on them in one step, so a
  load in flight when the delete happens can no longer fill its key (see fillLease-2.lua). Agents waiting on a
  broken lease are told. The keys go at once, as with one DEL; on a Cluster they share a slot, as DEL requires.

  KEYS     pairs: a cache key, then its lease key (names.leaseKey, in the same slot)
  ARGV[1]  the fill channel, the message for each broken lease being its cache key; '' when the caller announces
           on a control Redis itself

  Returns {deleted, key...}: the number of cache keys deleted, as DEL counts them (a key named twice counts once;
  leases are not counted), then the cache keys whose lease was broken.
]]
local cacheKeys = {}
for i = 1, #KEYS, 2 do cacheKeys[#cacheKeys + 1] = KEYS[i] end
local reply = {redis.call('DEL', unpack(cacheKeys))}
for i = 2, #KEYS, 2 do
  if redis.call('DEL', KEYS[i]) == 1 then
    reply[#reply + 1] = KEYS[i - 1]
    if ARGV[1] ~= '' then redis.call('PUBLISH', ARGV[1], KEYS[i - 1]) end
  end
end
return reply
