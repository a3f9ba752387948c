--[[
applyCounterMove: adds a sealed counter shard's value to the base key, exactly once.

KEYS[1]  the base key (the application's counter)
KEYS[2]  the move journal, in the base key's slot: a string of entries ';<field>=<value>,<applied at>[,<cleared at>]'
         (a string, not a hash, so that a reader gets it in the same MGET as the base key)
ARGV[1]  the journal field of this move, '<splitFactor>:<index>:<seq>'
ARGV[2]  the value to add
ARGV[3]  now, in Unix milliseconds

Returns  {1} applied; {0} already applied (a retried or resumed drain); {-1} the base key is not an integer.

The journal makes the move idempotent across retries and crashes, so it has no expiry: entries are deleted once
their shard is finished and no read can still straddle them (journal.ts). Readers use it too: a reader that sees
the entry and the shard not yet finished under that seq knows the value is counted twice and takes it out once,
so a move never shows up as a jump in the sum.
]]
local journal = redis.call('GET', KEYS[2]) or ''
if string.find(journal, ';' .. ARGV[1] .. '=', 1, true) then return {0} end
local current = redis.call('GET', KEYS[1])
if current and not string.match(current, '^-?%d+$') then return {-1} end
redis.call('INCRBY', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], journal .. ';' .. ARGV[1] .. '=' .. ARGV[2] .. ',' .. ARGV[3])
return {1}
