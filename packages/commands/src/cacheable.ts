import type { ReplyShape } from './reply-shape.js'

/**
 * Commands whose reply depends only on the current value of their one key, so a reply can be cached per
 * (key, command, args) until the key is written or expires, each with the shape of its reply (which decides how
 * every front door hands a cached reply back): making a command cacheable is one row here. An allow-list: a
 * command is cacheable only after someone has checked that it is. A call must also have exactly one key (EXISTS
 * k1 k2 is not cacheable as one entry; callers check the key count). MGET is left out for the same reason:
 * callers split it key by key.
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
export const CACHEABLE_REPLIES: ReadonlyMap<string, ReplyShape> = new Map<string, ReplyShape>([
  // strings
  ['get', 'bulk'],
  ['getrange', 'bulk'],
  ['substr', 'bulk'],
  ['strlen', 'integer'],
  ['getbit', 'integer'],
  ['bitcount', 'integer'],
  ['bitpos', 'integer'],
  // any type
  ['exists', 'integer'],
  ['type', 'status'],
  // hashes
  ['hget', 'bulk'],
  ['hmget', 'bulks'],
  ['hgetall', 'pairs'],
  ['hexists', 'integer'],
  ['hlen', 'integer'],
  ['hkeys', 'bulks'],
  ['hvals', 'bulks'],
  ['hstrlen', 'integer'],
  // lists
  ['lrange', 'bulks'],
  ['lindex', 'bulk'],
  ['llen', 'integer'],
  ['lpos', 'position'],
  // sets
  ['smembers', 'members'],
  ['sismember', 'integer'],
  ['smismember', 'integers'],
  ['scard', 'integer'],
  // sorted sets
  ['zrange', 'range'],
  ['zrangebyscore', 'range'],
  ['zrevrange', 'range'],
  ['zrevrangebyscore', 'range'],
  ['zrangebylex', 'bulks'],
  ['zrevrangebylex', 'bulks'],
  ['zscore', 'score'],
  ['zmscore', 'scores'],
  ['zcard', 'integer'],
  ['zcount', 'integer'],
  ['zlexcount', 'integer'],
  ['zrank', 'rank'],
  ['zrevrank', 'rank'],
])

/** The names of the cacheable commands (the rows of CACHEABLE_REPLIES). */
export const CACHEABLE_COMMANDS: ReadonlySet<string> = new Set(CACHEABLE_REPLIES.keys())
