import type { Mitigation } from '@heatsink/protocol'
import type { RedisKey } from 'ioredis'
import type { Fill, L1Cache } from './l1-cache.js'
import type { AgentLogger } from './options.js'
import type { HotKey } from './registry-view.js'
import type { AgentCounters } from './stats.js'

/** Reads a key from Redis, counting a null answer as a miss (of `hot`, when the key is registered). */
export type ReadThrough = (key: RedisKey, name: string, hot: HotKey | undefined) => Promise<string | null>

/**
 * How the agent serves one registered key's reads, chosen by the key's registry mitigation. The agent looks
 * the key up once per request and hands it to its key's strategy; enter and leave run when a key takes or
 * loses the mitigation.
 */
export interface MitigationStrategy {
  /** False when the strategy only passes reads on, so that an MGET may keep the key in its one round trip. */
  readonly servesReads: boolean
  get(key: RedisKey, name: string, hot: HotKey): Promise<string | null>
  enter(hot: HotKey): void
  leave(hot: HotKey): void
}

/** Reads go to Redis unchanged: the mitigations whose machinery comes in later issues (split, coalesce). */
export class PassThroughStrategy implements MitigationStrategy {
  readonly servesReads = false
  readonly #readThrough: ReadThrough

  constructor(readThrough: ReadThrough) {
    this.#readThrough = readThrough
  }

  get(key: RedisKey, name: string, hot: HotKey): Promise<string | null> {
    return this.#readThrough(key, name, hot)
  }

  enter(): void {}
  leave(): void {}
}

/** What LocalCacheStrategy needs. */
export interface LocalCacheStrategyOptions {
  l1: L1Cache
  /** GET + PTTL on a tracked connection. */
  fill(name: string): Promise<Fill>
  readThrough: ReadThrough
  /** Counts a read that found nothing. */
  onMiss(name: string, hot: HotKey): void
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

/** The strategy for each mitigation; a later issue replaces an entry to give its mitigation real behaviour. */
export type StrategyTable = Record<Mitigation, MitigationStrategy>
