import type { Callback, RedisKey } from 'ioredis'

/** A key as the sketch and L1 see it: Buffer keys are read as UTF-8. */
export function keyName(key: RedisKey): string {
  return typeof key === 'string' ? key : key.toString()
}

/** Removes a trailing callback from `args` and returns it, as ioredis does with its own arguments. */
export function takeCallback(args: unknown[]): Callback<unknown> | undefined {
  const last = args[args.length - 1]
  if (typeof last !== 'function') return undefined
  args.pop()
  return last as Callback<unknown>
}

/** The keys of a multi-key command called ioredis' two ways: `(k1, k2)` or `([k1, k2])`. */
export function keysOf(args: readonly unknown[]): RedisKey[] {
  const [first] = args
  return (args.length === 1 && Array.isArray(first) ? first : args) as RedisKey[]
}

/** Also calls back `callback`, node style, when one was given; returns the promise either way, as ioredis does. */
export function nodeify<T>(promise: Promise<T>, callback: Callback<T> | undefined): Promise<T> {
  if (callback !== undefined) {
    promise.then(
      (value) => callback(null, value),
      (error: Error) => callback(error),
    )
  }
  return promise
}
