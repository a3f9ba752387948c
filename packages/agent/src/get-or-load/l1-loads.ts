import type { Clock } from '@heatsink/sketch'
import { type Codec, decodeEnvelope, type Envelope, type StaleValue } from '@heatsink/stampede'
import { refreshDelay } from '../l1/refresh-ahead.js'
import type { CachedReply, ReplyCache, ReplyFill } from '../l1/reply-cache.js'

// GET <key>'s signature among the key's cached replies (see signatureOf): the reply getOrLoad reads.
const GET = 'get'
// How long before an L1 refresh a reload that replaces it starts: twice the envelope's last load time (loads vary),
// and this for the lease's and the write's round trips on a loaded host; at most half the time between refreshes
// (a reload that takes longer lands after the refresh it meant to replace, which then just runs).
const RELOAD_ROUND_TRIPS_MS = 20

/** What getOrLoad makes of one cached GET reply, worked out on its first hit and kept with the reply. */
interface Loaded {
  readonly codec: Codec
  /** The reply's text, as Redis stores it. */
  readonly text: string | null
  /** The envelope getOrLoad stored; undefined for a value written otherwise (decoded as it is). */
  readonly envelope: Envelope | undefined
  /** The value getOrLoad returns; undefined for an absent key or text the codec cannot read (it must load). */
  readonly value: StaleValue<unknown> | undefined
}

/** The L1 lifetime of a key's current envelope, and whether a hit has started its refresh ahead. */
interface EnvelopeLife {
  readonly expiresAt: number
  readonly lifetimeMs: number
  refreshing: boolean
}

/** A getOrLoad value from L1: `live` while its envelope's logical TTL runs, else only a late load's fallback. */
export interface L1Value {
  readonly value: StaleValue<unknown>
  readonly live: boolean
  /** What Redis stores for the key (L1's copy is tracked, so it is current): the guard's refresh starts from it. */
  readonly stored: string
  /**
   * True once per envelope, on a hit in its last L1 lifetime or shortly before the L1 refresh ahead of it: the time
   * to have the guard reload it.
   */
  readonly refreshDue: boolean
}

/**
 * getOrLoad's values in L1. There is one L1, the router's ReplyCache: a getOrLoad value is its key's cached GET
 * reply (the envelope as Redis holds it), filled through the same tracked connection, admitted, invalidated,
 * sized and expired under the same rules as any reply, and shared with plain GETs of the key through every
 * front door. What getOrLoad adds is the envelope's logical TTL: past it a hit is no longer a value to return
 * (the guard must see the read to reload), only the fallback of a caller whose load takes longer than maxWaitMs.
 *
 * The TTL L1 sees for an envelope is its logical one (the Redis TTL includes the stale window, fillPttl); the
 * cache's own rules then give its entries ttlFraction of it, kept by refills until the key is invalidated.
 */
export class L1Loads {
  readonly #cache: ReplyCache
  readonly #fill: (name: string) => Promise<ReplyFill>
  readonly #clock: Clock
  readonly #ttlFraction: number
  readonly #maxTtlMs: number
  readonly #maxKeys: number
  readonly #loaded = new WeakMap<CachedReply, Loaded>()
  /** By key, its latest envelope's L1 lifetime (at most #maxKeys of them). */
  readonly #lives = new Map<string, EnvelopeLife>()

  constructor(
    cache: ReplyCache,
    fill: (name: string) => Promise<ReplyFill>,
    clock: Clock,
    l1: { ttlFraction: number; maxTtlMs: number; maxEntries: number },
  ) {
    this.#cache = cache
    this.#fill = fill
    this.#clock = clock
    this.#ttlFraction = l1.ttlFraction
    this.#maxTtlMs = l1.maxTtlMs
    this.#maxKeys = l1.maxEntries
  }

  /**
   * The PTTL a fill of a GET should report to the cache: for an envelope, its logical TTL left (past it getOrLoad
   * must reload), else the key's own. An envelope already past its logical expiry keeps the key's own PTTL: it is
   * still what plain reads answer during its stale window.
   */
  fillPttl(reply: unknown, pttl: number): number {
    const envelope = envelopeOf(reply)
    if (envelope === undefined) return pttl
    const left = envelope.expiresAt - this.#clock.now()
    if (left <= 0) return pttl
    return pttl >= 0 ? Math.min(pttl, left) : left
  }

  /** The key's value as getOrLoad returns it, or undefined on a miss (a cached absence is one: it must load). */
  get(name: string, codec: Codec): L1Value | undefined {
    const cached = this.#cache.get(name, GET)
    if (cached === undefined) return undefined
    const loaded = this.#decode(cached, codec)
    if (loaded.value === undefined) return undefined
    const envelope = loaded.envelope
    const stored = loaded.text as string
    if (envelope === undefined) return { value: loaded.value, live: true, stored, refreshDue: false }
    const left = envelope.expiresAt - this.#clock.now()
    if (left <= 0) return { value: loaded.value, live: false, stored, refreshDue: false }
    // Due once per envelope: in its last L1 lifetime (the next refill would find it expired), or sooner, in place
    // of the L1 refresh before that (#replacesRefresh).
    const life = this.#life(name, envelope, left)
    const due =
      !life.refreshing && (left <= life.lifetimeMs || this.#replacesRefresh(name, envelope, left, life))
    if (due) life.refreshing = true
    return { value: loaded.value, live: true, stored, refreshDue: due }
  }

  /**
   * Whether the envelope's reload is better started now, in place of the key's next L1 refresh: refilled then, the
   * entry would next be refreshed only within the envelope's last lifetime, when the reload is due anyway, and the
   * reload's write would drop it soon after (a Redis read per process per logical TTL for nothing). Started a load's
   * time ahead of that refresh, the reload lands first and its write's invalidation cancels the refresh; one that
   * lands late costs nothing more than before (the refresh runs, and the reload's write drops it).
   */
  #replacesRefresh(name: string, envelope: Envelope, left: number, life: EnvelopeLife): boolean {
    const step = refreshDelay(life.lifetimeMs)
    if (step === undefined) return false
    const lead = Math.min(2 * envelope.deltaMs + RELOAD_ROUND_TRIPS_MS, step / 2)
    // The refresh is at most `lead` away, so what is left after it is at least left - lead: most hits stop here.
    if (left - lead >= life.lifetimeMs + step) return false
    const untilRefresh = this.#cache.refreshIn(name)
    return untilRefresh <= lead && left - untilRefresh < life.lifetimeMs + step
  }

  /** The key's value, live or past its logical TTL, with no refresh bookkeeping: a late load's fallback. */
  fallback(name: string, codec: Codec): StaleValue<unknown> | undefined {
    const cached = this.#cache.get(name, GET)
    return cached === undefined ? undefined : this.#decode(cached, codec).value
  }

  /**
   * Fills the key's GET reply, or joins the fill in flight; undefined when L1 cannot be filled now (channels
   * down, or the key not admitted). A fill that fails rejects.
   */
  fill(name: string): Promise<unknown> | undefined {
    return this.#cache.load(name, GET, () => this.#fill(name))
  }

  // The life of `envelope` (its logical TTL `left` ms from now), begun when first seen.
  #life(name: string, envelope: Envelope, left: number): EnvelopeLife {
    const known = this.#lives.get(name)
    if (known?.expiresAt === envelope.expiresAt) return known
    if (this.#lives.size >= this.#maxKeys) this.#lives.clear()
    const lifetimeMs = Math.min(Math.floor(left * this.#ttlFraction), this.#maxTtlMs)
    const life = { expiresAt: envelope.expiresAt, lifetimeMs, refreshing: false }
    this.#lives.set(name, life)
    return life
  }

  #decode(cached: CachedReply, codec: Codec): Loaded {
    const known = this.#loaded.get(cached)
    if (known !== undefined && known.codec === codec) return known
    const text = textOf(cached.raw)
    const envelope = text === null ? undefined : decodeEnvelope(text)
    const value =
      text === null
        ? undefined
        : envelope === undefined
          ? tryDecode(text, codec)
          : envelope.kind === 'u'
            ? { value: undefined }
            : envelope.kind === 'n'
              ? { value: null }
              : tryDecode(envelope.payload, codec)
    const loaded = { codec, text, envelope, value }
    this.#loaded.set(cached, loaded)
    return loaded
  }
}

function textOf(raw: unknown): string | null {
  if (raw === null || raw === undefined) return null
  return Buffer.isBuffer(raw) ? raw.toString() : String(raw)
}

// Envelopes open with the record separator (see @heatsink/stampede): other replies are not decoded to text.
const ENVELOPE_FIRST_BYTE = 0x1e

function envelopeOf(reply: unknown): Envelope | undefined {
  if (Buffer.isBuffer(reply) && reply[0] !== ENVELOPE_FIRST_BYTE) return undefined
  const text = typeof reply === 'string' || Buffer.isBuffer(reply) ? textOf(reply) : null
  return text === null ? undefined : decodeEnvelope(text)
}

function tryDecode(text: string, codec: Codec): StaleValue<unknown> | undefined {
  try {
    return { value: codec.decode(text) }
  } catch {
    return undefined
  }
}
