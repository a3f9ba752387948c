import { type Clock, systemClock } from '@heatsink/sketch'
import { LRUCache } from 'lru-cache'
import type { AgentEvents } from '../events/agent-events.js'
import type { AgentCounters, InvalidationSource } from '../events/stats.js'
import type { L1Options } from '../options/agent-options.js'
import { FillGate } from './fill-gate.js'
import { RefreshTimers } from './refresh-ahead.js'

/**
 * What the agent's L1 caches share: an LRU of admitted keys whose entries live a fraction of their key's TTL,
 * the fills in flight by key, and the FillGate that keeps a fill from storing what an invalidation made old.
 * Subclasses add what an entry is and how it is filled; admission, invalidation and channel loss are here.
 */
export abstract class GatedCache<V extends {}, F> {
  protected readonly lru: LRUCache<string, V>
  protected readonly gate = new FillGate()
  /** Fills in flight, by key. */
  protected readonly flights = new Map<string, F>()
  /** The lifetime the first fill since each key's last invalidation gave it (see refillLifetime). */
  readonly #lifetimes = new Map<string, number>()
  /** Refills ahead of expiry (subclasses schedule them); whatever drops a key's entry cancels its refill. */
  protected readonly refreshes = new RefreshTimers()
  protected readonly clock: Clock
  /**
   * The time entries' lifetimes are measured in, for lru-cache and for ReplyCache's direct hits alike: an injected
   * clock as it is (tests move lifetimes exactly); else performance.now() read at most once per millisecond
   * (coarseNow), lru-cache's own default resolution.
   */
  protected readonly now: () => number
  protected readonly ttlFraction: number
  protected readonly maxTtlMs: number
  /** The most one key's entry may take: an eighth of this cache's bytes. */
  protected readonly maxEntryBytes: number
  readonly #counters: AgentCounters
  readonly #events: AgentEvents | undefined

  /** `events` and `cache` (which L1 this is, in the events) report entries dropped early; none in unit tests. */
  constructor(
    // How long a fill may take is the tracked connection's business (PendingFills), not the cache's.
    options: Omit<Required<L1Options>, 'fillTimeoutMs'>,
    clock: Clock,
    counters: AgentCounters,
    events?: AgentEvents,
  ) {
    this.#counters = counters
    this.#events = events
    this.clock = clock
    this.ttlFraction = options.ttlFraction
    this.maxTtlMs = options.maxTtlMs
    // One L1 (getOrLoad's values are cached replies too, see L1Loads): it may hold all of maxBytes.
    const maxBytes = Math.max(1, options.maxBytes)
    this.maxEntryBytes = Math.max(1, Math.floor(maxBytes / 8))
    const now = clock === systemClock ? coarseNow : () => clock.now()
    this.now = now
    this.lru = new LRUCache<string, V>({
      max: options.maxEntries,
      maxSize: maxBytes,
      perf: { now },
      ttlResolution: 0,
      // Every entry that leaves (evicted, expired, replaced, deleted, cleared) passes here, synchronously.
      dispose: (value, key, reason) => {
        this.dropped(value)
        if (reason !== 'evict') return
        counters.l1Evictions++
        events?.l1Dropped(key, 'evicted', undefined)
      },
    })
  }

  /** Keys with live entries (expired ones dropped first; at most maxEntries to look at). */
  get size(): number {
    this.lru.purgeStale()
    return this.lru.size
  }

  /** The estimated bytes of the live entries (see retainedBytes). */
  get bytes(): number {
    return this.lru.calculatedSize
  }

  /** True while fills may start and store: every invalidation channel is live. */
  get usable(): boolean {
    return this.gate.usable
  }

  /** Allows `name` in (it became local_cache); admitting an admitted key changes nothing. */
  admit(name: string): void {
    this.gate.admit(name)
  }

  /** Removes `name` for good (it left local_cache); a fill in flight will not store. */
  retire(name: string): void {
    if (!this.gate.retire(name)) return
    this.#lifetimes.delete(name)
    this.refreshes.cancel(name)
    const hadFlight = this.flights.delete(name)
    const hadEntry = this.lru.delete(name)
    if (hadEntry) this.#events?.l1Dropped(name, 'invalidated', 'registry')
    if (hadEntry || hadFlight) this.#counters.l1Invalidations.registry++
  }

  /** Drops `name`'s entry and fills in flight, because its value changed. A no-op for keys not admitted. */
  invalidate(name: string, source: InvalidationSource): void {
    if (!this.gate.bump(name)) return
    this.#lifetimes.delete(name)
    this.refreshes.cancel(name)
    const hadFlight = this.flights.delete(name)
    const hadEntry = this.lru.delete(name)
    if (hadEntry) this.#events?.l1Dropped(name, 'invalidated', source)
    if (hadEntry || hadFlight) this.#counters.l1Invalidations[source]++
  }

  /** Drops every entry and fill in flight (a flush, or a lost channel). */
  invalidateAll(source: InvalidationSource): void {
    this.gate.bumpAll()
    this.#lifetimes.clear()
    this.refreshes.cancelAll()
    this.#counters.l1Invalidations[source] += this.lru.size + this.flights.size
    const events = this.#events
    if (events?.watchingL1) {
      for (const key of this.lru.keys()) events.l1Dropped(key, 'invalidated', source)
    }
    this.flights.clear()
    this.lru.clear()
  }

  /**
   * Records whether every invalidation channel is live. Losing one empties the cache and voids fills in flight:
   * what was cached can no longer be vouched for, and nothing is cached until the channels are back.
   */
  setUsable(usable: boolean): void {
    if (this.gate.setUsable(usable)) this.invalidateAll('channelLoss')
  }

  /** Empties the cache and forgets every admitted key (on close). */
  clear(): void {
    this.gate.clear()
    this.#lifetimes.clear()
    this.refreshes.cancelAll()
    this.flights.clear()
    this.lru.clear()
  }

  /** `value` left the LRU, for whatever reason; subclasses forget what pointed at it. */
  protected dropped(_value: V): void {}

  /** Whether an entry of `bytes` may be stored; one that may not is counted (l1TooLarge). */
  protected fits(bytes: number): boolean {
    if (bytes <= this.maxEntryBytes) return true
    this.#counters.l1TooLarge++
    return false
  }

  /**
   * The lifetime of an entry of `name` filled now, its key's PTTL being `remainingMs`: the first fill since the
   * key's last invalidation sets it (lifetime), and refills keep it, cut to what is left of the key's TTL. A
   * fraction of what is left would shrink with each refill: a hot key with a 1 s TTL was read from Redis about 30
   * times per TTL rather than 5. Keeping it is safe: the value is the one the first fill saw (any write, EXPIRE or
   * expiry of the key is an invalidation, which starts anew), and the entry never outlives the key.
   */
  protected refillLifetime(name: string, remainingMs: number): number {
    let lifetime = this.#lifetimes.get(name)
    if (lifetime === undefined) {
      lifetime = this.lifetime(remainingMs)
      this.#lifetimes.set(name, lifetime)
    }
    return remainingMs >= 0 ? Math.min(lifetime, remainingMs) : lifetime
  }

  /** An entry's lifetime: ttlFraction of the key's remaining TTL, capped; a key without TTL gets the cap. */
  protected lifetime(remainingMs: number): number {
    return remainingMs >= 0
      ? Math.min(Math.floor(remainingMs * this.ttlFraction), this.maxTtlMs)
      : this.maxTtlMs
  }
}

// performance.now() as lru-cache reads it by default (ttlResolution 1): at most once per millisecond, the reading
// kept until an unref'd timer clears it. A reading is at most as old as the timer's delay (longer only while one
// synchronous run, or one chain of microtasks, keeps timers from firing: the same bound lru-cache's own has).
let cachedNow = 0

function coarseNow(): number {
  if (cachedNow !== 0) return cachedNow
  const now = performance.now()
  cachedNow = now
  setTimeout(forgetNow, 1).unref()
  return now
}

function forgetNow(): void {
  cachedNow = 0
}
