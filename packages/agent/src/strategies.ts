import type { Mitigation } from '@heatsink/protocol'
import type { Codec, ContextLoader, Fetched, GetOrLoadOptions } from '@heatsink/stampede'
import type { RedisKey } from 'ioredis'
import type { Fill, L1Cache } from './l1-cache.js'
import type { AgentLogger } from './options.js'
import type { HotKey } from './registry-view.js'
import type { AgentCounters } from './stats.js'

/** Reads a key from Redis, counting a null answer as a miss (of `hot`, when the key is registered). */
export type ReadThrough = (key: RedisKey, name: string, hot: HotKey | undefined) => Promise<string | null>

/** The options of agent.getOrLoad: those of @heatsink/stampede's getOrLoad but the fallback, which is L1's. */
export type LoadOptions = Omit<GetOrLoadOptions<unknown>, 'fallback'>

/**
 * The application's source of a key's value (a database query); undefined or null means "not found". It is
 * handed a LoadContext (the signal to pass on, the stale value, setTtl, skip); a loader taking no argument
 * simply ignores it.
 */
export type Loader<T> = ContextLoader<T>

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

/**
 * How the agent serves one registered key's reads, chosen by the key's registry mitigation. The agent looks
 * the key up once per request and hands it to its key's strategy; enter and leave run when a key takes or
 * loses the mitigation.
 */
export interface MitigationStrategy {
  /** False when the strategy only passes reads on, so that an MGET may keep the key in its one round trip. */
  readonly servesReads: boolean
  get(key: RedisKey, name: string, hot: HotKey): Promise<string | null>
  /** agent.getOrLoad of the key. */
  load<T>(name: string, hot: HotKey, loader: Loader<T>, options: LoadOptions): Promise<T>
  enter(hot: HotKey): void
  leave(hot: HotKey): void
}

/** What LocalCacheStrategy needs. */
export interface LocalCacheStrategyOptions {
  l1: L1Cache
  /** GET + PTTL on a tracked connection. */
  fill(name: string): Promise<Fill>
  /** Reads Redis as a plain read answers (the codec's text of a getOrLoad value), counting misses. */
  readThrough: ReadThrough
  /** Counts a read that found nothing. */
  onMiss(name: string, hot: HotKey): void
  fetch: FetchThrough
  /** The stampede guard's isCurrent: no invalidation of the key since `generation`. */
  isCurrent(name: string, generation: number): boolean
  codec: Codec
  counters: AgentCounters
  log: AgentLogger
}

/**
 * local_cache: reads are served from L1, filled through tracked connections. A hit is one LRU lookup and an
 * already-resolved promise. A miss joins or starts a fill; when L1 cannot be filled (a channel is down) or
 * the fill fails, the read goes to Redis as if the key were not registered.
 */
export class LocalCacheStrategy implements MitigationStrategy {
  readonly servesReads = true
  readonly #options: LocalCacheStrategyOptions

  constructor(options: LocalCacheStrategyOptions) {
    this.#options = options
  }

  get(key: RedisKey, name: string, hot: HotKey): Promise<string | null> {
    const { l1, counters } = this.#options
    const cached = l1.get(name)
    if (cached !== undefined) {
      hot.l1Hits++
      counters.l1Hits++
      if (cached === null) this.#options.onMiss(name, hot)
      return Promise.resolve(cached)
    }
    hot.l1Misses++
    counters.l1Misses++
    const loading = l1.load(name, this.#options.fill)
    if (loading === undefined) return this.#options.readThrough(key, name, hot)
    return loading.then(
      (value) => {
        if (value === null) this.#options.onMiss(name, hot)
        return value
      },
      (error: unknown) => {
        this.#options.log.debug(
          { key: name, error: (error as Error).message },
          'l1 fill failed, reading through',
        )
        return this.#options.readThrough(key, name, hot)
      },
    )
  }

  /**
   * getOrLoad: from L1, else through the stampede guard, offering the expired L1 entry as the fallback of a
   * caller whose load takes longer than its maxWaitMs. A value the guard vouches for as current then goes into
   * L1 by a fill through the tracked connection, not as the value at hand: Redis reports a later write only to
   * a connection that has read the key, so an entry nobody tracks could outlive a write that bypassed the agents.
   */
  async load<T>(name: string, hot: HotKey, loader: Loader<T>, options: LoadOptions): Promise<T> {
    const { l1, counters, codec } = this.#options
    const cached = l1.getLoaded(name, codec)
    if (cached !== undefined) {
      hot.l1Hits++
      counters.l1Hits++
      return cached.value as T
    }
    hot.l1Misses++
    counters.l1Misses++
    const fetched = await this.#options.fetch(name, hot, loader, {
      ...options,
      fallback: () => l1.expired(name, codec) as { value: T } | undefined,
    })
    if (
      fetched.source !== 'stale' &&
      fetched.source !== 'fallback' &&
      this.#options.isCurrent(name, fetched.generation)
    ) {
      l1.load(name, this.#options.fill)?.catch((error: unknown) => {
        this.#options.log.debug({ key: name, error: (error as Error).message }, 'l1 fill after load failed')
      })
    }
    return fetched.value
  }

  /** Admits the key and fills it at once, so the first read after a promotion is already a hit. */
  enter(hot: HotKey): void {
    const { l1, fill, log } = this.#options
    l1.admit(hot.key)
    l1.load(hot.key, fill)?.catch((error: unknown) => {
      log.debug({ key: hot.key, error: (error as Error).message }, 'l1 prefill failed')
    })
  }

  leave(hot: HotKey): void {
    this.#options.l1.retire(hot.key)
  }
}

/** The strategy for each mitigation; split's issue replaces its pass-through entry. */
export type StrategyTable = Record<Mitigation, MitigationStrategy>
