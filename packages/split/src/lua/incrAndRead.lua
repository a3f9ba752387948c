--[[
incrAndRead: adds a delta to a split counter (or not: a GET) and reads what sums it, in one step, so that the increment and the
read of the value after it are one command: commands sent one after another on a connection then run in Redis in
that order (and no other client's write falls between an increment and its read).

KEYS[1]  the shard written (the base key when ARGV[2] is '1')
KEYS[2]  the shard's gate (a string "state:target:seq:moved"; an empty state, or no gate, means open)
KEYS[3]  the base key; KEYS[4] the move journal; KEYS[5] the routes; then every shard read, each followed by its gate
ARGV[1]  the delta, an integer; '' to read only (a GET)
ARGV[2]  '1' to write the base key itself (the key is held folded, or still activating)

Returns  read after the write (nil for a key absent): the values of KEYS[3] onwards while a journal or a route
         exists; otherwise base key, journal, routes and the shards without their gates. {-1} when the key to
         write holds something that is not an integer (nothing written).

A closed gate sends the delta to the base key, which every read sums: always correct, only less spread (the
writers' hop to the gate's target layout, counter.ts, spreads it).
]]
if ARGV[1] ~= '' then
  local target = KEYS[1]
  if ARGV[2] == '1' then
    target = KEYS[3]
  else
    local gate = redis.call('GET', KEYS[2])
    if gate and string.match(gate, '^(%a*):') ~= '' then target = KEYS[3] end
  end
  local kind = redis.call('TYPE', target).ok
  if kind ~= 'none' and kind ~= 'string' then return {-1} end
  local current = redis.call('GET', target)
  if current and not string.match(current, '^-?%d+$') then return {-1} end
  redis.call('INCRBY', target, ARGV[1])
end
-- No journal and no route: no drain is recorded, the gates change nothing and are left out.
if redis.call('EXISTS', KEYS[4], KEYS[5]) > 0 then return redis.call('MGET', unpack(KEYS, 3)) end
local read = {KEYS[3], KEYS[4], KEYS[5]}
for i = 6, #KEYS, 2 do read[#read + 1] = KEYS[i] end
return redis.call('MGET', unpack(read))
