import type { Codec } from './codec.js'
import { decodeEnvelope, type Envelope, encodeEnvelope } from './envelope.js'
import { jitterFactor } from './jitter.js'
import type { ResolvedLoadOptions } from './options.js'
import { shouldRefreshEarly } from './xfetch.js'

/** A cache entry as read from Redis: its value, and its envelope unless a plain SET wrote it. */
export interface Entry {
  value: unknown
  envelope: Envelope | undefined
}

/**
 * How a read treats an entry: `fresh` is served; `early` is served and refreshed in the background (XFetch
 * drew it); `stale` is past its TTL but within staleSeconds, served at once and refreshed; `expired` is not
 * served, the caller loads.
 */
export type Freshness = 'fresh' | 'early' | 'stale' | 'expired'

/** The entry in `stored`; undefined for a missing key or text the codec cannot read (both are loaded anew). */
export function readEntry(stored: string | null, codec: Codec): Entry | undefined {
  if (stored === null) return undefined
  const envelope = decodeEnvelope(stored)
  try {
    if (envelope === undefined) return { value: codec.decode(stored), envelope }
    const value =
      envelope.kind === 'v' ? codec.decode(envelope.payload) : envelope.kind === 'n' ? null : undefined
    return { value, envelope }
  } catch {
    return undefined
  }
}

/**
 * Where `entry` stands at `now`. A value written by a plain SET carries no expiry and is fresh until Redis
 * expires it. A negative entry has no stale window: an entity that appears should be seen at its TTL.
 */
export function freshness(
  entry: Entry,
  now: number,
  options: ResolvedLoadOptions,
  random: () => number,
): Freshness {
  const envelope = entry.envelope
  if (envelope === undefined) return 'fresh'
  if (now < envelope.expiresAt) {
    return shouldRefreshEarly(now, envelope.expiresAt, envelope.deltaMs, options.xfetchBeta, random)
      ? 'early'
      : 'fresh'
  }
  if (envelope.kind === 'v' && now < envelope.expiresAt + options.staleMs) return 'stale'
  return 'expired'
}

/** What a load writes: the envelope's text and the key's physical time to live. */
export interface StoredEntry {
  text: string
  ttlMs: number
}

/**
 * The entry for a loaded `value`, or undefined when it is not cached (a "not found" with negativeTtlSeconds
 * 0). One jitter factor scales the logical TTL and the physical one (TTL + stale window) alike.
 */
export function buildEntry(
  value: unknown,
  deltaMs: number,
  now: number,
  options: ResolvedLoadOptions,
  random: () => number,
  codec: Codec,
): StoredEntry | undefined {
  const negative = value === undefined || value === null
  const baseTtlMs = negative ? options.negativeTtlMs : options.ttlMs
  if (baseTtlMs === 0) return undefined
  const factor = jitterFactor(options.jitter, random)
  const ttlMs = Math.max(1, Math.round(baseTtlMs * factor))
  const physicalMs = negative
    ? ttlMs
    : Math.max(ttlMs, Math.round((options.ttlMs + options.staleMs) * factor))
  const text = encodeEnvelope({
    expiresAt: now + ttlMs,
    deltaMs: Math.round(deltaMs),
    kind: value === undefined ? 'u' : value === null ? 'n' : 'v',
    payload: negative ? '' : codec.encode(value),
  })
  return { text, ttlMs: physicalMs }
}
