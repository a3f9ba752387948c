/**
 * Commands whose reply depends only on the current value of their one key, so a reply can be cached per
 * (key, command, args) until the key is written or expires. An allow-list: a command is cacheable only after
 * someone has checked that it is. A call must also have exactly one key (EXISTS k1 k2 is not cacheable as
 * one entry; callers check the key count). MGET is left out for the same reason: callers split it key by key.
 *
 * Deliberately left out:
 * - TTL, PTTL, EXPIRETIME, PEXPIRETIME: TTL's reply moves with the clock, and all four change with EXPIRE
 *   and PERSIST, which leave the value alone.
 * - SRANDMEMBER, SPOP, HRANDFIELD, ZRANDMEMBER, RANDOMKEY: random by design.
 * - OBJECT, MEMORY, DUMP, DEBUG: describe the encoding and the server's bookkeeping (idle time, frequency,
 *   allocation), which change on every read.
 * - SCAN, HSCAN, SSCAN, ZSCAN: the reply depends on the cursor's walk of the server's hash table.
 * - SORT, SORT_RO: BY and GET read other keys, whose writes would not invalidate the entry.
 * - Anything blocking, and anything that writes (GETEX, GETDEL, LPOP...).
 * - Geo and stream reads, and the commands of modules: not needed yet; add them here once checked.
 */
export const CACHEABLE_COMMANDS: ReadonlySet<string> = new Set([
  // strings
  'get',
  'getrange',
  'substr',
  'strlen',
  'getbit',
  'bitcount',
  'bitpos',
  // any type
  'exists',
  'type',
  // hashes
  'hget',
  'hmget',
  'hgetall',
  'hexists',
  'hlen',
  'hkeys',
  'hvals',
  'hstrlen',
  // lists
  'lrange',
  'lindex',
  'llen',
  'lpos',
  // sets
  'smembers',
  'sismember',
  'smismember',
  'scard',
  // sorted sets
  'zrange',
  'zrangebyscore',
  'zrevrange',
  'zrevrangebyscore',
  'zrangebylex',
  'zrevrangebylex',
  'zscore',
  'zmscore',
  'zcard',
  'zcount',
  'zlexcount',
  'zrank',
  'zrevrank',
])
