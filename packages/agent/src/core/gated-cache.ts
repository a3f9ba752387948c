import { type Clock, systemClock } from '@heatsink/sketch'
import { LRUCache } from 'lru-cache'
import type { AgentEvents } from '../events/agent-events.js'
import type { L1DroppedEvent } from '../events/channels.js'
import type { L1Options } from '../options.js'
import type { AgentCounters, InvalidationSource } from '../stats.js'
import { FillGate } from './fill-gate.js'

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
  protected readonly clock: Clock
  protected readonly ttlFraction: number
  protected readonly maxTtlMs: number
  /** The most one key's entry may take: an eighth of this cache's bytes. */
  protected readonly maxEntryBytes: number
  readonly #counters: AgentCounters
  readonly #events: AgentEvents | undefined
  readonly #cache: L1DroppedEvent['cache']

  /** `events` and `cache` (which L1 this is, in the events) report entries dropped early; none in unit tests. */
  constructor(
    // How long a fill may take is the tracked connection's business (PendingFills), not the cache's.
    options: Omit<Required<L1Options>, 'fillTimeoutMs'>,
    clock: Clock,
    counters: AgentCounters,
    events?: AgentEvents,
    cache: L1DroppedEvent['cache'] = 'values',
  ) {
    this.#counters = counters
    this.#events = events
    this.#cache = cache
    this.clock = clock
    this.ttlFraction = options.ttlFraction
    this.maxTtlMs = options.maxTtlMs
    // L1 is two caches (replies of the command path, getOrLoad's values): each holds half of maxBytes.
    const maxBytes = Math.max(1, Math.floor(options.maxBytes / 2))
    this.maxEntryBytes = Math.max(1, Math.floor(maxBytes / 8))
    const injected = clock !== systemClock
    this.lru = new LRUCache<string, V>({
      max: options.maxEntries,
      maxSize: maxBytes,
      // The system clock uses lru-cache's own monotonic timer, read at most once per ms; an injected clock is
      // read on every check so tests move lifetimes exactly.
      ...(injected ? { perf: { now: () => clock.now() }, ttlResolution: 0 } : {}),
      dispose: (_value, key, reason) => {
        if (reason !== 'evict') return
        counters.l1Evictions++
        events?.l1Dropped(key, 'evicted', undefined, this.#cache)
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
    const hadFlight = this.flights.delete(name)
    const hadEntry = this.lru.delete(name)
    if (hadEntry) this.#events?.l1Dropped(name, 'invalidated', 'registry', this.#cache)
    if (hadEntry || hadFlight) this.#counters.l1Invalidations.registry++
  }

  /** Drops `name`'s entry and fills in flight, because its value changed. A no-op for keys not admitted. */
  invalidate(name: string, source: InvalidationSource): void {
    if (!this.gate.bump(name)) return
    const hadFlight = this.flights.delete(name)
    const hadEntry = this.lru.delete(name)
    if (hadEntry) this.#events?.l1Dropped(name, 'invalidated', source, this.#cache)
    if (hadEntry || hadFlight) this.#counters.l1Invalidations[source]++
  }

  /** Drops every entry and fill in flight (a flush, or a lost channel). */
  invalidateAll(source: InvalidationSource): void {
    this.gate.bumpAll()
    this.#counters.l1Invalidations[source] += this.lru.size + this.flights.size
    const events = this.#events
    if (events?.watchingL1) {
      for (const key of this.lru.keys()) events.l1Dropped(key, 'invalidated', source, this.#cache)
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
    this.flights.clear()
    this.lru.clear()
  }

  /** Whether an entry of `bytes` may be stored; one that may not is counted (l1TooLarge). */
  protected fits(bytes: number): boolean {
    if (bytes <= this.maxEntryBytes) return true
    this.#counters.l1TooLarge++
    return false
  }

  /** An entry's lifetime: ttlFraction of the key's remaining TTL, capped; a key without TTL gets the cap. */
  protected lifetime(remainingMs: number): number {
    return remainingMs >= 0
      ? Math.min(Math.floor(remainingMs * this.ttlFraction), this.maxTtlMs)
      : this.maxTtlMs
  }
}
