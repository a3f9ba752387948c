--[[
mergeMembers: copies members of a sealed set or sorted-set shard into the base key, skipping members that were
written or removed on the base key since the fold began; only for the holder of the key's fold lease.

KEYS[1]  the base key (a set or sorted set)
KEYS[2]  the touched set (members written or removed on the base key through the splitter during the fold)
KEYS[3]  the key's fold lease
ARGV[1]  the fold lease's token
ARGV[2]  's' for a set, 'z' for a sorted set, 'zk' for a sorted set keeping the base key's score of a member it
         already holds (strays found long after a fold, when the base key's entry is the newer one)
ARGV[3..] set: members; sorted set: score, member, score, member, ...

Returns  the number of members written to the base key; -2 when the lease is not held by this token (nothing
         written: the fold must stop before it deletes the shard).

A touched member's state on the base key is newer than the shard's copy: a removal there must not be undone
and a newer score must not be overwritten. The lease check fences out a folder whose lease expired while it
was stalled, since only the lease's existence makes writers record what they touch. Merging is idempotent, so
a retried drain does no harm.
]]
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return -2 end
local merged = 0
if ARGV[2] == 's' then
  for i = 3, #ARGV do
    if redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 0 then
      redis.call('SADD', KEYS[1], ARGV[i])
      merged = merged + 1
    end
  end
else
  local keep = ARGV[2] == 'zk'
  for i = 3, #ARGV, 2 do
    if redis.call('SISMEMBER', KEYS[2], ARGV[i + 1]) == 0 then
      if keep then
        merged = merged + redis.call('ZADD', KEYS[1], 'NX', ARGV[i], ARGV[i + 1])
      else
        redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i + 1])
        merged = merged + 1
      end
    end
  end
end
return merged
