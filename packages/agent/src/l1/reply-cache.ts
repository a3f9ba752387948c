import { type CommandSpec, ioredisReply } from '@heatsink/commands'
import { GatedCache } from './gated-cache.js'
import { refreshDelay } from './refresh-ahead.js'
import { OBJECT_OVERHEAD_BYTES, ownedReply, retainedBytes } from './retained-bytes.js'

/** A fill's answer: the command's reply as Redis sent it (Buffers, arrays, integers, null) and the key's PTTL. */
export type ReplyFill = readonly [reply: unknown, pttlMs: number]

// A key's replies live in one LRU entry; a key read by more distinct commands than this is cached for the first
// ones only (a hash read field by field by a thousand HGETs would otherwise grow one entry without bound).
const MAX_REPLIES_PER_KEY = 64
const GET_OPTIONS = {}

/**
 * One cached reply: as the parser gave it (`raw`), and as a client that decodes replies to strings sees it,
 * worked out once on first use (`decoded`, see ioredisReply in @heatsink/commands) so that the fast path converts nothing per hit.
 */
export class CachedReply {
  readonly raw: unknown
  #decoded: unknown = undefined
  // A boolean of its own rather than a marker value in #decoded: comparing a decoded string with a marker symbol
  // was a generic comparison (a call) on every hit; testing a boolean is one instruction.
  #isDecoded = false

  constructor(raw: unknown) {
    this.raw = raw
  }

  /** The reply as ioredis would have decoded it for `spec`'s command, worked out on the first call only. */
  decoded(spec: CommandSpec): unknown {
    if (this.#isDecoded) return this.#decoded
    this.#decoded = ioredisReply(spec, this.raw)
    this.#isDecoded = true
    return this.#decoded
  }
}

/** How a reply of a key is read again from Redis (the fill that cached it). */
type Fill = () => Promise<ReplyFill>

/**
 * Where a caller keeps the entry it last found for a key, so that a hit reads it without an LRU lookup: the key's
 * HotKey. ReplyCache owns the pointer: it sets it on a lookup and clears it whenever the entry leaves the LRU.
 */
export interface ReplySlot {
  readonly key: string
  replies: KeyReplies | undefined
}

// A direct hit on an entry touched in the LRU less than this long ago leaves its recency as it is: LRU order is
// kept to this resolution (exact while one key is read in a row, see #lastTouched).
const TOUCH_EVERY_MS = 100

/** The replies Redis gave for one key, by command signature (see signatureOf), and their estimated bytes. */
export class KeyReplies {
  readonly bySignature = new Map<string, CachedReply>()
  /**
   * The reply the entry was created with, and its signature: most hot keys are read by one command (GET k), whose
   * hit then compares a string rather than looking it up in bySignature. Replies are only ever added, so it holds.
   */
  readonly firstSignature: string
  readonly first: CachedReply
  /** How each reply was filled: a refresh ahead of expiry fills them again. */
  readonly fills = new Map<string, Fill>()
  bytes = OBJECT_OVERHEAD_BYTES
  /** The key's hit count when this entry was stored: a refresh is due only if it moved (the key is still read). */
  hitsAtStore = 0
  /** When the LRU's lifetime of this entry ends (GatedCache.now): a direct hit checks it instead of the LRU. */
  expiresAt = 0
  /** When this entry is refilled ahead of its expiry (GatedCache.now), or Infinity for never. */
  refreshAt = Number.POSITIVE_INFINITY
  /** When this entry was last moved to the LRU's most recent end (GatedCache.now). */
  touchedAt = 0
  /** The slot that points here (see ReplySlot), cleared when the entry leaves. */
  slot: ReplySlot | undefined

  constructor(name: string, signature: string, first: CachedReply) {
    this.bytes += 2 * name.length
    this.firstSignature = signature
    this.first = first
    this.bySignature.set(signature, first)
  }

  /** The reply cached for `signature`, or undefined. */
  reply(signature: string): CachedReply | undefined {
    return signature === this.firstSignature ? this.first : this.bySignature.get(signature)
  }
}

/**
 * L1 for the command path: replies cached per (key, command, arguments), so that GET, HGETALL, LRANGE, ZRANGE
 * and the other read commands of a local_cache key are answered without a round trip. Entries are what the
 * Redis parser produced, not what the client made of them, so `get` and `getBuffer`, `hgetall`'s object and
 * `call('HGETALL')`'s array are all answered from one reply.
 *
 * Invalidation is per key: any write to the key drops every reply cached for it; a fill in flight meanwhile
 * does not store (FillGate).
 */
export class ReplyCache extends GatedCache<KeyReplies, Map<string, Promise<unknown>>> {
  /**
   * A key's hits so far (its HotKey's l1Hits), set by the agent: an entry read since it was stored is refilled
   * shortly before it expires (refresh-ahead.ts), so a key read without pause never waits on Redis at expiry. Unset,
   * entries simply expire and the next read refills them.
   */
  hitsOf: ((name: string) => number | undefined) | undefined
  /** The LRU's most recently used entry when known (the last one got or set), else undefined. */
  #lastTouched: KeyReplies | undefined

  /** The cached reply of `signature` on `name`, or undefined on a miss. */
  get(name: string, signature: string): CachedReply | undefined {
    const entry = this.lru.get(name, GET_OPTIONS)
    this.#lastTouched = entry
    return entry?.reply(signature)
  }

  /**
   * As get() for `slot`'s key, read through the slot's pointer to the key's entry while the entry's lifetime runs
   * (the hit then skips the LRU's lookup and its TTL check); the LRU's recency is updated unless the entry is the
   * most recent already or was moved there within TOUCH_EVERY_MS.
   */
  hit(slot: ReplySlot, signature: string): CachedReply | undefined {
    const entry = slot.replies
    if (entry !== undefined) {
      const now = this.now()
      if (now < entry.expiresAt && (entry === this.#lastTouched || now - entry.touchedAt < TOUCH_EVERY_MS)) {
        return entry.reply(signature)
      }
    }
    const found = this.lru.get(slot.key, GET_OPTIONS)
    this.#lastTouched = found
    if (found === undefined) return undefined
    found.touchedAt = this.now()
    if (found.slot !== slot) {
      if (found.slot !== undefined) found.slot.replies = undefined
      found.slot = slot
      slot.replies = found
    }
    return found.reply(signature)
  }

  /**
   * How long until `name`'s entry is refilled ahead of its expiry (ms), or Infinity when it is not going to be: no
   * entry, or one that ends with its key. A guess, not a promise: the refill is skipped if the entry goes unread.
   */
  refreshIn(name: string): number {
    const entry = this.lru.peek(name)
    return entry === undefined ? Number.POSITIVE_INFINITY : Math.max(0, entry.refreshAt - this.now())
  }

  protected override dropped(entry: KeyReplies): void {
    if (this.#lastTouched === entry) this.#lastTouched = undefined
    const slot = entry.slot
    if (slot === undefined) return
    entry.slot = undefined
    if (slot.replies === entry) slot.replies = undefined
  }

  /**
   * Fills `signature` of `name` through `fill`, or joins the fill in flight; resolves with the reply. Returns
   * undefined when the cache cannot be filled now (channels down, or the key not admitted).
   */
  load(name: string, signature: string, fill: Fill): Promise<unknown> | undefined {
    const flight = this.flights.get(name)?.get(signature)
    if (flight !== undefined) return this.gate.ticket(name) === undefined ? undefined : flight
    return this.#start(name, signature, fill, undefined)
  }

  // A fill of `signature`; `replacing`, for a refresh: the entry it replaces when it lands, with a lifetime anew.
  #start(
    name: string,
    signature: string,
    fill: Fill,
    replacing: KeyReplies | undefined,
  ): Promise<unknown> | undefined {
    const ticket = this.gate.ticket(name)
    if (ticket === undefined) return undefined
    const started: Promise<unknown> = fill().then(
      ([reply, pttl]) => {
        this.#land(name, signature, started)
        if (this.gate.stillValid(name, ticket)) this.#store(name, signature, fill, reply, pttl, replacing)
        return reply
      },
      (error: unknown) => {
        this.#land(name, signature, started)
        throw error
      },
    )
    let flights = this.flights.get(name)
    if (flights === undefined) {
      flights = new Map()
      this.flights.set(name, flights)
    }
    flights.set(signature, started)
    return started
  }

  // Refills every reply of `entry` if it is still the key's entry and was read since it was stored; each refill
  // lands as a new entry (the first) or into it (the others). A refill that fails leaves the entry to expire.
  #refresh(name: string, entry: KeyReplies): void {
    if (this.lru.peek(name) !== entry || this.hitsOf?.(name) === entry.hitsAtStore) return
    for (const [signature, fill] of entry.fills) {
      if (this.flights.get(name)?.has(signature)) continue
      this.#start(name, signature, fill, entry)?.catch(() => {})
    }
  }

  #land(name: string, signature: string, flight: Promise<unknown>): void {
    const flights = this.flights.get(name)
    if (flights?.get(signature) !== flight) return
    flights.delete(signature)
    if (flights.size === 0) this.flights.delete(name)
  }

  // A key's entry lives the lifetime its first fill since the key's last invalidation set (refillLifetime);
  // replies added later share that lifetime (the key's TTL only shrinks with time, and any command that changes it is a write). A reply is
  // counted twice: as Redis sent it, and as the client's decoded copy made on the first hit.
  #store(
    name: string,
    signature: string,
    fill: Fill,
    reply: unknown,
    pttl: number,
    replacing: KeyReplies | undefined,
  ): void {
    const bytes = OBJECT_OVERHEAD_BYTES + 2 * signature.length + 2 * retainedBytes(reply)
    const current = this.lru.get(name, GET_OPTIONS)
    this.#lastTouched = current
    const replies = current === replacing ? undefined : current
    if (replies !== undefined) {
      if (replies.bySignature.size >= MAX_REPLIES_PER_KEY || !this.fits(replies.bytes + bytes)) return
      replies.bySignature.set(signature, new CachedReply(ownedReply(reply)))
      replies.fills.set(signature, fill)
      replies.bytes += bytes
      // The same entry again, for its new size; its lifetime stays the one its first fill set.
      this.lru.set(name, replies, { size: replies.bytes, noUpdateTTL: true })
      this.#lastTouched = replies
      replies.touchedAt = this.now()
      return
    }
    const lifetime = this.refillLifetime(name, pttl)
    if (lifetime < 1) return
    const created = new KeyReplies(name, signature, new CachedReply(ownedReply(reply)))
    if (!this.fits(created.bytes + bytes)) return
    created.fills.set(signature, fill)
    created.bytes += bytes
    const now = this.now()
    created.expiresAt = now + lifetime
    created.touchedAt = now
    this.lru.set(name, created, { ttl: lifetime, size: created.bytes })
    this.#lastTouched = created
    // An entry that ends with its key (its TTL cut the lifetime) is not refreshed: the key's expiry, which Redis
    // reports as an invalidation, ends it, and a read after that refills it.
    const hits = this.hitsOf?.(name)
    const delay = hits === undefined || (pttl >= 0 && lifetime >= pttl) ? undefined : refreshDelay(lifetime)
    if (delay === undefined) return
    created.hitsAtStore = hits as number
    created.refreshAt = now + delay
    this.refreshes.schedule(name, delay, () => this.#refresh(name, created))
  }
}
