import type { Codec, StaleValue } from '@heatsink/stampede'
import { GatedCache } from './core/gated-cache.js'
import { OBJECT_OVERHEAD_BYTES } from './core/retained-bytes.js'
import { EnvelopeEntry, entryFor, type L1Value, loadedValue, NIL, plainText } from './l1-entry.js'

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
 * A fill stores only if no invalidation came meanwhile (FillGate, in GatedCache). Concurrent misses of one key
 * share a fill, and a request arriving after an invalidation starts a new one.
 *
 * Values getOrLoad stored are envelopes (@heatsink/stampede): plain reads get the codec's text from them,
 * getOrLoad the decoded value, and they live ttlFraction of their logical TTL, not of the Redis TTL, which
 * includes the stale window.
 */
export class L1Cache extends GatedCache<L1Value, Promise<string | null>> {
  /** The cached value as a plain read answers it (null for a cached absence), or undefined on a miss. */
  get(name: string): string | null | undefined {
    const value = this.lru.get(name, GET_OPTIONS)
    if (typeof value !== 'object') return value
    return value === NIL ? null : (value as EnvelopeEntry).text
  }

  /** The cached value as getOrLoad returns it, or undefined on a miss (a cached absence is one: it must load). */
  getLoaded(name: string, codec: Codec): StaleValue<unknown> | undefined {
    const value = this.lru.get(name, KEEP_EXPIRED)
    return value === undefined ? undefined : loadedValue(value, codec)
  }

  /** The entry of `name` even if its lifetime has passed (not if invalidated): a late load's fallback. */
  expired(name: string, codec: Codec): StaleValue<unknown> | undefined {
    const value = this.lru.peek(name, EXPIRED_TOO)
    return value === undefined ? undefined : loadedValue(value, codec)
  }

  /**
   * Fills `name` through `fill`, or joins the fill in flight, answering as a plain read. Returns undefined when
   * L1 cannot be filled now (channels down, or the key not admitted): the caller reads through instead.
   */
  load(name: string, fill: (name: string) => Promise<Fill>): Promise<string | null> | undefined {
    const flight = this.flights.get(name)
    if (flight !== undefined) return flight
    const ticket = this.gate.ticket(name)
    if (ticket === undefined) return undefined
    const started: Promise<string | null> = fill(name).then(
      ([text, pttl]) => {
        if (this.flights.get(name) === started) this.flights.delete(name)
        const entry = entryFor(text)
        if (this.gate.stillValid(name, ticket)) this.#store(name, entry, pttl)
        return plainText(entry)
      },
      (error: unknown) => {
        if (this.flights.get(name) === started) this.flights.delete(name)
        throw error
      },
    )
    this.flights.set(name, started)
    return started
  }

  // An entry lives ttlFraction of the key's remaining TTL, capped; a key without TTL (or absent) gets the cap.
  // For an envelope the TTL is its logical one: past it, getOrLoad's guard must see reads to refresh.
  #store(name: string, entry: L1Value, pttl: number): void {
    let remaining = pttl
    if (entry instanceof EnvelopeEntry) {
      const logical = entry.envelope.expiresAt - this.clock.now()
      remaining = pttl >= 0 ? Math.min(pttl, logical) : logical
      if (remaining <= 0) return
    }
    const lifetime = this.lifetime(remaining)
    if (lifetime < 1) return
    const bytes = entryBytes(name, entry)
    if (!this.fits(bytes)) return
    this.lru.set(name, entry, { ttl: lifetime, size: bytes })
  }
}

// An entry's estimated bytes: its key and text at two bytes a character, and for an envelope its text twice
// (the envelope's payload and getOrLoad's decoded value are of about its size).
function entryBytes(name: string, entry: L1Value): number {
  const key = OBJECT_OVERHEAD_BYTES + 2 * name.length
  if (typeof entry === 'string') return key + OBJECT_OVERHEAD_BYTES + 2 * entry.length
  if (entry === NIL) return key
  return key + 3 * OBJECT_OVERHEAD_BYTES + 4 * ((entry as EnvelopeEntry).text?.length ?? 0)
}
