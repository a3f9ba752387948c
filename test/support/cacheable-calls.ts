/** One call of a cacheable read: the command (lowercase), the key's name after the run's prefix, the arguments. */
export interface CacheableCall {
  readonly command: string
  readonly key: string
  readonly args: readonly string[]
}

/** The keys CACHEABLE_CALLS read (after the run's prefix); `missing` is never written. */
export const CACHEABLE_KEYS = ['s', 'h', 'l', 'set', 'z', 'lex', 'missing'] as const

// Values beyond ASCII, and hash fields named like Object.prototype's: what decoding and HGETALL's object must keep.
const HASH_FIELDS = ['a', '__proto__', 'constructor', '7', ...Array.from({ length: 14 }, (_, i) => `f${i}`)]

/** What a client must do to write CACHEABLE_KEYS under `prefix`. */
export interface KeyWriter {
  set(key: string, value: string): Promise<unknown>
  hset(key: string, fields: Record<string, string>): Promise<unknown>
  rpush(key: string, ...values: string[]): Promise<unknown>
  sadd(key: string, ...members: string[]): Promise<unknown>
  zadd(key: string, ...scoresAndMembers: string[]): Promise<unknown>
}

/** Writes the keys CACHEABLE_CALLS read: a string, a hash, a list, a set, a sorted set, one of equal scores. */
export async function writeCacheableKeys(redis: KeyWriter, prefix: string): Promise<void> {
  await redis.set(`${prefix}s`, 'héllo ✓ wörld')
  await redis.hset(`${prefix}h`, Object.fromEntries(HASH_FIELDS.map((field, i) => [field, `value ${i} ✓`])))
  await redis.rpush(`${prefix}l`, 'x', 'y', 'ü', 'y')
  await redis.sadd(`${prefix}set`, 'x', 'y', 'z')
  await redis.zadd(`${prefix}z`, '1.5', 'a', '2', 'b', '-inf', 'c', '3', 'ü')
  await redis.zadd(`${prefix}lex`, '0', 'a', '0', 'b', '0', 'ç')
}

const call = (command: string, key: string, ...args: string[]): CacheableCall => ({ command, key, args })

/**
 * Calls of every cacheable command of Redis 7.0 on CACHEABLE_KEYS, in each of the forms its reply takes (nil,
 * empty, WITHSCORES, COUNT...). A test of every cacheable command checks that each has a call here.
 */
export const CACHEABLE_CALLS: readonly CacheableCall[] = [
  call('get', 's'),
  call('get', 'missing'),
  call('getrange', 's', '1', '4'),
  call('substr', 's', '0', '-1'),
  call('strlen', 's'),
  call('getbit', 's', '3'),
  call('bitcount', 's'),
  call('bitpos', 's', '1'),
  call('exists', 's'),
  call('exists', 'missing'),
  call('type', 's'),
  call('type', 'h'),
  call('type', 'missing'),
  call('hget', 'h', 'a'),
  call('hget', 'h', 'nofield'),
  call('hmget', 'h', 'a', 'nofield', '__proto__'),
  call('hgetall', 'h'),
  call('hgetall', 'missing'),
  call('hexists', 'h', 'a'),
  call('hlen', 'h'),
  call('hkeys', 'h'),
  call('hvals', 'h'),
  call('hstrlen', 'h', 'a'),
  call('lrange', 'l', '0', '-1'),
  call('lrange', 'missing', '0', '-1'),
  call('lindex', 'l', '2'),
  call('lindex', 'l', '99'),
  call('llen', 'l'),
  call('lpos', 'l', 'y'),
  call('lpos', 'l', 'y', 'COUNT', '0'),
  call('lpos', 'l', 'nothing'),
  call('smembers', 'set'),
  call('smembers', 'missing'),
  call('sismember', 'set', 'x'),
  call('smismember', 'set', 'x', 'nothing'),
  call('scard', 'set'),
  call('zrange', 'z', '0', '-1'),
  call('zrange', 'z', '0', '-1', 'WITHSCORES'),
  call('zrangebyscore', 'z', '-inf', '+inf', 'WITHSCORES'),
  call('zrevrange', 'z', '0', '-1', 'WITHSCORES'),
  call('zrevrangebyscore', 'z', '+inf', '1'),
  call('zrangebylex', 'lex', '-', '+'),
  call('zrevrangebylex', 'lex', '+', '[b'),
  call('zscore', 'z', 'a'),
  call('zscore', 'z', 'nomember'),
  call('zmscore', 'z', 'a', 'nomember', 'c'),
  call('zcard', 'z'),
  call('zcount', 'z', '1', '2'),
  call('zlexcount', 'lex', '-', '+'),
  call('zrank', 'z', 'b'),
  call('zrank', 'z', 'nomember'),
  call('zrevrank', 'z', 'b'),
]
