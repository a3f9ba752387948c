import { type CopyExpiry, NotAnIntegerError, type Splitter } from '@heatsink/split'

/** How one command runs on a split key: over its shards through the splitter, when its form allows. */
export interface SplitRoute {
  /** Arguments after the key that the split form can serve faithfully; other forms go to the base key. */
  splittable?(rest: readonly unknown[]): boolean
  run(splitter: Splitter, name: string, n: number, rest: readonly unknown[]): Promise<unknown>
}

const text = (arg: unknown): string => (Buffer.isBuffer(arg) ? arg.toString() : String(arg))
const texts = (args: readonly unknown[]): string[] => args.map(text)

/**
 * The split forms of `createAgent`'s own commands (its `incr`, `sadd`, `zadd`, `set` of read-mostly copies...):
 * counter writes to one random shard and reads of the sum, set and sorted-set writes to shards and reads over
 * all, a plain value as N read-mostly copies, with the splitter's semantics (docs/architecture.md, "Key
 * splitting"). The front doors do not use this table: they serve only what is faithful to Redis (split-keys.ts).
 * Replies are strings and numbers, not parser Buffers.
 */
export const SPLIT_ROUTES: ReadonlyMap<string, SplitRoute> = new Map<string, SplitRoute>([
  ['incr', { run: (s, name, n) => s.incr(name, n) }],
  ['decr', { run: (s, name, n) => s.decr(name, n) }],
  ['incrby', { run: (s, name, n, [delta]) => s.incrby(name, n, text(delta)) }],
  ['decrby', { run: (s, name, n, [delta]) => s.decrby(name, n, text(delta)) }],
  ['sadd', { run: (s, name, n, members) => s.sadd(name, n, ...texts(members)) }],
  ['srem', { run: (s, name, n, members) => s.srem(name, n, ...texts(members)) }],
  ['smembers', { run: (s, name, n) => s.smembers(name, n) }],
  ['scard', { run: (s, name, n) => s.scard(name, n) }],
  ['sismember', { run: (s, name, n, [member]) => s.sismember(name, n, text(member)) }],
  [
    'zadd',
    {
      // ZADD flags (NX, XX, GT, LT, CH, INCR) would need every shard's view; only score-member pairs split.
      splittable: (rest) =>
        rest.length >= 2 && rest.length % 2 === 0 && Number.isFinite(Number(text(rest[0]))),
      run: (s, name, n, pairs) => s.zadd(name, n, ...texts(pairs)),
    },
  ],
  ['zrem', { run: (s, name, n, members) => s.zrem(name, n, ...texts(members)) }],
  ['zscore', { run: (s, name, n, [member]) => s.zscore(name, n, text(member)) }],
  ['zcard', { run: (s, name, n) => s.zcard(name, n) }],
  [
    'zrange',
    {
      splittable: isRankRange,
      run: (s, name, n, [start, stop, ...rest]) =>
        s.zrange(name, n, Number(text(start)), Number(text(stop)), withScores(rest)),
    },
  ],
  [
    'zrevrange',
    {
      splittable: isRankRange,
      run: (s, name, n, [start, stop, ...rest]) =>
        s.zrevrange(name, n, Number(text(start)), Number(text(stop)), withScores(rest)),
    },
  ],
  [
    'get',
    {
      // The registry says only "split", not what the key holds: a counter's sum, else one read-mostly copy.
      run: (s, name, n) =>
        s.get(name, n).catch((error: unknown) => {
          if (error instanceof NotAnIntegerError) return s.getCopy(name, n)
          throw error
        }),
    },
  ],
  [
    'set',
    {
      splittable: (rest) => isCopyExpiry(rest.slice(1)),
      run: (s, name, n, [value, unit, amount]) => {
        const expiry = (
          unit === undefined ? [] : [text(unit).toUpperCase(), Number(text(amount))]
        ) as CopyExpiry
        return s.setCopies(name, n, text(value), ...expiry)
      },
    },
  ],
])

function withScores(rest: readonly unknown[]): 'WITHSCORES' | undefined {
  return rest.some((arg) => text(arg).toUpperCase() === 'WITHSCORES') ? 'WITHSCORES' : undefined
}

// ZRANGE's BYSCORE/BYLEX/REV/LIMIT forms are not rank ranges; only WITHSCORES may follow the ranks.
function isRankRange(rest: readonly unknown[]): boolean {
  return rest.slice(2).every((arg) => text(arg).toUpperCase() === 'WITHSCORES')
}

// SET's forms a split key's copies can take: a value, optionally with EX or PX.
function isCopyExpiry(expiry: readonly unknown[]): boolean {
  if (expiry.length === 0) return true
  if (expiry.length !== 2) return false
  const unit = text(expiry[0]).toUpperCase()
  const amount = Number(text(expiry[1]))
  if (unit !== 'EX' && unit !== 'PX') return false
  return Number.isInteger(amount)
}
