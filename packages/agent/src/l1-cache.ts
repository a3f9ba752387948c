import { type Clock, systemClock } from '@heatsink/sketch'
import type { Codec, StaleValue } from '@heatsink/stampede'
import { LRUCache } from 'lru-cache'
import { FillGate } from './core/fill-gate.js'
import { EnvelopeEntry, entryFor, type L1Value, loadedValue, NIL, plainText } from './l1-entry.js'
import type { L1Options } from './options.js'
import type { AgentCounters, InvalidationSource } from './stats.js'

/** A fill's answer: the key's value (null when absent) and its PTTL in ms (-1 no TTL, -2 absent). */
export type Fill = readonly [value: string | null, pttlMs: number]

// lru-cache reads its options from this argument and defaults it to a fresh object; one shared object spares
// an allocation per hit.
const GET_OPTIONS = {}
// getOrLoad leaves an expired entry in place: it is the fallback of a caller whose load takes too long.
const KEEP_EXPIRED = { noDeleteOnStaleGet: true }
const EXPIRED_TOO = { allowStale: true }

/**
 * The in-process cache of hot keys (seed 001, "Local In-Process Cache"): a fixed-size LRU whose entries live a
 * fraction of their key's Redis TTL, capped. Only keys admitted by the registry (mitigation local_cache) are
 * filled, and only while every invalidation channel is live.
 *
 * Fills race with invalidations: a fill read before a write can answer after the write's invalidation arrived.
 * Every admitted key therefore has a generation, bumped by each invalidation, and every channel loss bumps an
 * epoch; a fill stores its value only if both are unchanged when its answer arrives. Concurrent misses of one
 * key share a fill, and a request arriving after an invalidation starts a new one.
 *
 * Values getOrLoad stored are envelopes (@heatsink/stampede): plain reads get the codec's text from them,
 * getOrLoad the decoded value, and they live ttlFraction of their logical TTL, not of the Redis TTL, which
 * includes the stale window.
 */
export class L1Cache {
  readonly #lru: LRUCache<string, L1Value>
  readonly #clock: Clock
  readonly #gate = new FillGate()
  readonly #flights = new Map<string, Promise<string | null>>()
  readonly #counters: AgentCounters
  readonly #ttlFraction: number
  readonly #maxTtlMs: number

  constructor(options: Required<L1Options>, clock: Clock, counters: AgentCounters) {
    this.#counters = counters
    this.#clock = clock
    this.#ttlFraction = options.ttlFraction
    this.#maxTtlMs = options.maxTtlMs
    const injected = clock !== systemClock
    this.#lru = new LRUCache<string, L1Value>({
      max: options.maxEntries,
      // The system clock uses lru-cache's own monotonic timer, read at most once per ms; an injected clock is
      // read on every check so tests move lifetimes exactly.
      ...(injected ? { perf: { now: () => clock.now() }, ttlResolution: 0 } : {}),
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') counters.l1Evictions++
      },
    })
  }

  /** The cached value as a plain read answers it (null for a cached absence), or undefined on a miss. */
  get(name: string): string | null | undefined {
    const value = this.#lru.get(name, GET_OPTIONS)
    if (typeof value !== 'object') return value
    return value === NIL ? null : (value as EnvelopeEntry).text
  }

  /** The cached value as getOrLoad returns it, or undefined on a miss (a cached absence is one: it must load). */
  getLoaded(name: string, codec: Codec): StaleValue<unknown> | undefined {
    const value = this.#lru.get(name, KEEP_EXPIRED)
    return value === undefined ? undefined : loadedValue(value, codec)
  }

  /** The entry of `name` even if its lifetime has passed (not if invalidated): a late load's fallback. */
  expired(name: string, codec: Codec): StaleValue<unknown> | undefined {
    const value = this.#lru.peek(name, EXPIRED_TOO)
    return value === undefined ? undefined : loadedValue(value, codec)
  }

  /** Live entries: expired ones are dropped first (at most maxEntries to look at). */
  get size(): number {
    this.#lru.purgeStale()
    return this.#lru.size
  }

  /** True while fills may start and store: every invalidation channel is live. */
  get usable(): boolean {
    return this.#gate.usable
  }

  /** Allows `name` into L1 (it became local_cache); admitting an admitted key changes nothing. */
  admit(name: string): void {
    this.#gate.admit(name)
  }

  /** Removes `name` from L1 for good (it left local_cache); a fill in flight will not store. */
  retire(name: string): void {
    if (!this.#gate.retire(name)) return
    const hadFlight = this.#flights.delete(name)
    if (this.#lru.delete(name) || hadFlight) this.#counters.l1Invalidations.registry++
  }

  /** Drops `name`'s entry and any fill in flight, because its value changed. A no-op for keys not admitted. */
  invalidate(name: string, source: InvalidationSource): void {
    if (!this.#gate.bump(name)) return
    const hadFlight = this.#flights.delete(name)
    if (this.#lru.delete(name) || hadFlight) this.#counters.l1Invalidations[source]++
  }

  /** Drops every entry and fill in flight (a flush, or a lost channel). */
  invalidateAll(source: InvalidationSource): void {
    this.#gate.bumpAll()
    this.#counters.l1Invalidations[source] += this.#lru.size + this.#flights.size
    this.#flights.clear()
    this.#lru.clear()
  }

  /**
   * Records whether every invalidation channel is live. Losing one empties L1 and voids fills in flight: what
   * was cached can no longer be vouched for, and nothing is cached until the channels are back.
   */
  setUsable(usable: boolean): void {
    if (this.#gate.setUsable(usable)) this.invalidateAll('channelLoss')
  }

  /**
   * Fills `name` through `fill`, or joins the fill in flight, answering as a plain read. Returns undefined when
   * L1 cannot be filled now (channels down, or the key not admitted): the caller reads through instead.
   */
  load(name: string, fill: (name: string) => Promise<Fill>): Promise<string | null> | undefined {
    const flight = this.#flights.get(name)
    if (flight !== undefined) return flight
    const ticket = this.#gate.ticket(name)
    if (ticket === undefined) return undefined
    const started: Promise<string | null> = fill(name).then(
      ([text, pttl]) => {
        if (this.#flights.get(name) === started) this.#flights.delete(name)
        const entry = entryFor(text)
        if (this.#gate.stillValid(name, ticket)) this.#store(name, entry, pttl)
        return plainText(entry)
      },
      (error: unknown) => {
        if (this.#flights.get(name) === started) this.#flights.delete(name)
        throw error
      },
    )
    this.#flights.set(name, started)
    return started
  }

  /** Empties L1 and forgets every admitted key (on close). */
  clear(): void {
    this.#gate.clear()
    this.#flights.clear()
    this.#lru.clear()
  }

  // An entry lives ttlFraction of the key's remaining TTL, capped; a key without TTL (or absent) gets the cap.
  // For an envelope the TTL is its logical one: past it, getOrLoad's guard must see reads to refresh.
  #store(name: string, entry: L1Value, pttl: number): void {
    let remaining = pttl
    if (entry instanceof EnvelopeEntry) {
      const logical = entry.envelope.expiresAt - this.#clock.now()
      remaining = pttl >= 0 ? Math.min(pttl, logical) : logical
      if (remaining <= 0) return
    }
    const lifetime =
      remaining >= 0 ? Math.min(Math.floor(remaining * this.#ttlFraction), this.#maxTtlMs) : this.#maxTtlMs
    if (lifetime < 1) return
    this.#lru.set(name, entry, { ttl: lifetime })
  }
}
