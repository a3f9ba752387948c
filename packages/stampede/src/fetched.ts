/** Where a caller's value came from. */
export type FetchSource =
  /** Redis held a fresh value. */
  | 'hit'
  /** Redis held a value within its stale window; a refresh runs in the background. */
  | 'stale'
  /** This guard ran the loader. */
  | 'load'
  /** Another agent ran the loader while this guard waited on its lease. */
  | 'peer'
  /** maxWaitMs passed and the caller's fallback served. */
  | 'fallback'

/** A value with how it was obtained; the callers of one flight share one Fetched (the agent counts a flight's miss once by it). */
export interface Fetched<T> {
  value: T
  source: FetchSource
  /**
   * The generation ticket the value was read or loaded under: fill L1 with it only while
   * `guard.isCurrent(key, generation)`, and never with a `stale` or `fallback` value.
   */
  generation: number
}

/** Where a failure that no caller sees happened. */
export interface GuardErrorContext {
  key: string
  phase: 'refresh' | 'fill' | 'extend' | 'release'
}
