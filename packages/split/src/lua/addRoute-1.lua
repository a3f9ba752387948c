--[[
addRoute: records that the closed gates of one layout of a split key send writes to another layout (a reshard
between two split factors), for as long as such gates may exist.

KEYS[1]  the key's routes (a string ',<from>><to>,...'; same slot as the key)
ARGV[1]  the split factor whose gates close
ARGV[2]  the split factor they send writes to
ARGV[3]  how long to keep the record, in milliseconds: the closed gates' lifetime (never shortened)

Returns  1.

Called before the gates are sealed and again once each is finished, so that in any one snapshot a closed gate
pointing at another layout comes with its route: a counter reader on a standalone Redis reads no gate unless
the routes name a layout it reads (counter.ts).
]]
local routes = redis.call('GET', KEYS[1]) or ','
local route = ARGV[1] .. '>' .. ARGV[2] .. ','
if not string.find(routes, ',' .. route, 1, true) then routes = routes .. route end
local ttl = math.max(tonumber(ARGV[3]), redis.call('PTTL', KEYS[1]))
redis.call('SET', KEYS[1], routes, 'PX', ttl)
return 1
