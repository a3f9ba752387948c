/**
 * One command a split counter serves over its shards. `delta` reads the arguments after the key: the
 * increment it applies (0n for GET), or undefined when they are not this command's form, in which case Redis
 * answers an error whatever the key holds (wrong arity, an increment that is not an integer or would overflow
 * on negation), so the command goes to Redis unchanged.
 */
export interface CounterForm {
  readonly write: boolean
  delta(rest: readonly unknown[]): bigint | undefined
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/**
 * The commands a split counter answers exactly as the unsplit key would (see "Key splitting" in
 * docs/architecture.md): INCR, DECR, INCRBY and DECRBY add to one shard and answer the sum read after the
 * write, GET answers the sum. Every other command on a split key folds it first.
 */
export const COUNTER_FORMS: ReadonlyMap<string, CounterForm> = new Map<string, CounterForm>([
  ['incr', { write: true, delta: (rest) => (rest.length === 0 ? 1n : undefined) }],
  ['decr', { write: true, delta: (rest) => (rest.length === 0 ? -1n : undefined) }],
  ['incrby', { write: true, delta: (rest) => (rest.length === 1 ? int64(rest[0]) : undefined) }],
  [
    'decrby',
    {
      write: true,
      delta: (rest) => {
        const value = rest.length === 1 ? int64(rest[0]) : undefined
        // DECRBY of INT64_MIN is Redis's "decrement would overflow": its own error.
        return value === undefined || value === INT64_MIN ? undefined : -value
      },
    },
  ],
  ['get', { write: false, delta: (rest) => (rest.length === 0 ? 0n : undefined) }],
])

/**
 * An argument as Redis's string2ll reads a 64-bit integer: optional '-', no leading zeros, no '+', no spaces;
 * undefined otherwise.
 */
export function int64(arg: unknown): bigint | undefined {
  const text = Buffer.isBuffer(arg) ? arg.toString('latin1') : String(arg)
  if (!CANONICAL_INTEGER.test(text)) return undefined
  const value = BigInt(text)
  return value < INT64_MIN || value > INT64_MAX ? undefined : value
}

/** Redis's canonical decimal integer: what INCR accepts in a string value, and what it writes. */
export const CANONICAL_INTEGER = /^(?:0|-?[1-9][0-9]{0,19})$/
