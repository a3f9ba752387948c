import { InvalidStampedeOptionError } from './errors.js'

/**
 * What a loader is handed (bentocache's factory context, in this library's terms). A loader that takes no
 * argument ignores it and works as before.
 */
export interface LoadContext<T = unknown> {
  /** The key being loaded. */
  readonly key: string
  /**
   * Fires when nobody wants the result any more: every caller waiting on this load aborted (their own signals),
   * or the guard is closing. Pass it to the database or HTTP call. Callers that merely passed their maxWaitMs
   * do not fire it: the load goes on and fills the cache for the next caller.
   */
  readonly signal: AbortSignal
  /**
   * The key's previous value when it is stale or expired (read from Redis, or the agent's expired L1 entry),
   * for a loader that can refresh incrementally or fall back on it; undefined when there is none.
   */
  readonly gracedEntry: { readonly value: T } | undefined
  /** True for a background refresh (stale-while-revalidate or an early XFetch refresh): no caller is waiting. */
  readonly background: boolean
  /** Sets this entry's TTL in ms, overriding ttlSeconds (negativeTtlSeconds for a "not found"). */
  setTtl(ms: number): void
  /**
   * Declines caching the result: callers get what the loader returns, nothing is written to Redis and the next
   * call loads again. Returns undefined, so `return ctx.skip()` answers "not found" without caching it.
   */
  skip(): undefined
}

/** A loader handed a LoadContext; loaders written before it (no argument) still fit. */
export type ContextLoader<T> = (context: LoadContext<T>) => Promise<T> | T

/** One loader call's context, with what the loader decided about caching its result. */
export class LoadRun<T> implements LoadContext<T> {
  readonly key: string
  readonly signal: AbortSignal
  readonly gracedEntry: { readonly value: T } | undefined
  readonly background: boolean
  /** The TTL the loader set, in ms. */
  ttlMs: number | undefined
  skipped = false

  constructor(
    key: string,
    signal: AbortSignal,
    gracedEntry: { readonly value: T } | undefined,
    background: boolean,
  ) {
    this.key = key
    this.signal = signal
    this.gracedEntry = gracedEntry
    this.background = background
  }

  setTtl = (ms: number): void => {
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new InvalidStampedeOptionError('setTtl', `expected a finite number of ms above 0, received ${ms}`)
    }
    this.ttlMs = ms
  }

  skip = (): undefined => {
    this.skipped = true
    return undefined
  }
}
