--[[
baseWrite: a set or sorted-set write on the base key of a split key, remembered while a fold runs.

KEYS[1]  the base key
KEYS[2]  the key's fold lease: while it exists a fold is running
KEYS[3]  the touched set
ARGV[1]  'sadd', 'srem', 'zadd' or 'zrem'
ARGV[2]  how long the touched set is kept after its last write, in milliseconds
ARGV[3..] sadd, srem, zrem: members; zadd: score, member, score, member, ...

Returns  sadd, zadd: the number of members new to the base key; srem, zrem: one flag per member, 1 if removed.

During a fold every member written or removed here is added to the touched set, which mergeMembers-2.lua
consults, so a shard's older copy never undoes it.
]]
local op = ARGV[1]
local folding = redis.call('EXISTS', KEYS[2]) == 1
local step = op == 'zadd' and 2 or 1
local first = op == 'zadd' and 4 or 3
if folding then
  for i = first, #ARGV, step do redis.call('SADD', KEYS[3], ARGV[i]) end
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
if op == 'sadd' then return redis.call('SADD', KEYS[1], unpack(ARGV, 3)) end
if op == 'zadd' then return redis.call('ZADD', KEYS[1], unpack(ARGV, 3)) end
local command = op == 'srem' and 'SREM' or 'ZREM'
local flags = {}
for i = 3, #ARGV do flags[#flags + 1] = redis.call(command, KEYS[1], ARGV[i]) end
return flags
