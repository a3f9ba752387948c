import type { Mitigation } from '@heatsink/protocol'
import type { Codec, Fetched, GetOrLoadOptions } from '@heatsink/stampede'
import type { AgentCounters } from '../events/stats.js'
import type { AgentLogger } from '../options/agent-options.js'
import type { HotKey, MitigationStrategy } from '../registry/hot-key.js'
import type { L1Loads } from './l1-loads.js'
import type { Loader, LoadOptions } from './loader.js'

/**
 * The stampede guard's fetch for the agent: a caller whose value had to be loaded (here or by another agent)
 * counts as a miss of the key.
 */
export type FetchThrough = <T>(
  name: string,
  hot: HotKey | undefined,
  loader: Loader<T>,
  options: GetOrLoadOptions<T>,
) => Promise<Fetched<T>>

/** coalesce and replica_read: getOrLoad goes to the stampede guard, which coalesces anyway; `enter`/`leave` as given. */
export class GuardedLoads implements MitigationStrategy {
  readonly #fetch: FetchThrough
  readonly #enter: (hot: HotKey) => void
  readonly #leave: (hot: HotKey) => void

  constructor(fetch: FetchThrough, enter: (hot: HotKey) => void = noop, leave: (hot: HotKey) => void = noop) {
    this.#fetch = fetch
    this.#enter = enter
    this.#leave = leave
  }

  async load<T>(name: string, hot: HotKey, loader: Loader<T>, options: LoadOptions): Promise<T> {
    return (await this.#fetch(name, hot, loader, options)).value
  }

  enter(hot: HotKey): void {
    this.#enter(hot)
  }

  leave(hot: HotKey): void {
    this.#leave(hot)
  }
}

function noop(): void {}

/** The stampede guard's refresh of a key whose stored text the caller holds (see StampedeGuard.refreshAhead). */
export type RefreshThrough = <T>(
  name: string,
  stored: string,
  loader: Loader<T>,
  options: LoadOptions,
) => void

/** What LocalCacheStrategy needs. */
export interface LocalCacheStrategyOptions {
  /** getOrLoad's values in L1 (the router's reply cache). */
  l1: L1Loads
  fetch: FetchThrough
  refresh: RefreshThrough
  /** The stampede guard's isCurrent: no invalidation of the key since `generation`. */
  isCurrent(name: string, generation: number): boolean
  codec: Codec
  counters: AgentCounters
  log: AgentLogger
}

/**
 * local_cache for getOrLoad: from L1 (the key's cached GET reply, see L1Loads), else through the stampede guard.
 * Plain reads of the key are the router's (its L1 hits and fills); this strategy fills the key's GET reply on
 * promotion (and when the channels are back), so that the first GET or getOrLoad after it is already a hit.
 */
export class LocalCacheStrategy implements MitigationStrategy {
  readonly #options: LocalCacheStrategyOptions

  constructor(options: LocalCacheStrategyOptions) {
    this.#options = options
  }

  /**
   * From L1, else through the stampede guard, offering the expired L1 value as the fallback of a caller whose
   * load takes longer than its maxWaitMs. A value the guard vouches for as current then goes into L1 by a fill
   * through the tracked connection, not as the value at hand: Redis reports a later write only to a connection
   * that has read the key, so an entry nobody tracks could outlive a write that bypassed the agents.
   */
  async load<T>(name: string, hot: HotKey, loader: Loader<T>, options: LoadOptions): Promise<T> {
    const { l1, counters, codec } = this.#options
    const cached = l1.get(name, codec)
    if (cached?.live === true) {
      hot.l1Hits++
      counters.l1Hits++
      if (cached.refreshDue) this.#refreshAhead(name, cached.stored, loader, options)
      return cached.value.value as T
    }
    hot.l1Misses++
    counters.l1Misses++
    // The refill first, shared with every other miss: while the envelope in Redis is still fresh it is the one
    // read of this lifetime; only an expired or absent value goes on to the guard (and its own read of Redis).
    const refilled = cached === undefined ? await this.#refill(name) : undefined
    if (refilled?.live === true) return refilled.value.value as T
    const fetched = await this.#options.fetch(name, hot, loader, {
      ...options,
      fallback: () => l1.fallback(name, codec) as { value: T } | undefined,
    })
    if (
      fetched.source !== 'stale' &&
      fetched.source !== 'fallback' &&
      this.#options.isCurrent(name, fetched.generation)
    ) {
      this.#fillQuietly(name, 'l1 fill after load failed')
    }
    return fetched.value
  }

  // The guard's refresh of the key from the envelope L1 holds (tracked, so it is what Redis stores): the loader runs
  // (once in the cluster, under the lease) before the logical expiry, and its write's invalidation makes the next
  // read refill L1 with the new envelope. Nobody waits on it.
  #refreshAhead<T>(name: string, stored: string, loader: Loader<T>, options: LoadOptions): void {
    const { signal: _callerOnly, ...rest } = options
    try {
      this.#options.refresh(name, stored, loader, rest)
    } catch (error) {
      this.#options.log.debug({ key: name, error: (error as Error).message }, 'l1 refresh ahead failed')
    }
  }

  // L1's fill of the key (joined when one is in flight), then its value as getOrLoad returns it; undefined when
  // L1 cannot be filled now, the fill failed, or it stored nothing getOrLoad may return (expired, absent).
  async #refill(name: string) {
    const { l1, codec } = this.#options
    const filling = l1.fill(name)
    if (filling === undefined) return undefined
    try {
      await filling
    } catch {
      return undefined
    }
    return l1.get(name, codec)
  }

  #fillQuietly(name: string, failure: string): void {
    this.#options.l1.fill(name)?.catch((error: unknown) => {
      this.#options.log.debug({ key: name, error: (error as Error).message }, failure)
    })
  }

  /** Fills the key's GET reply at once (a key of another type answers an error, which stores nothing). */
  enter(hot: HotKey): void {
    this.#fillQuietly(hot.key, 'l1 prefill failed')
  }

  leave(): void {}
}

/** The strategy for each mitigation. */
export type StrategyTable = Record<Mitigation, MitigationStrategy>
