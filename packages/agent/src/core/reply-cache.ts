import { GatedCache } from './gated-cache.js'
import { OBJECT_OVERHEAD_BYTES, ownedReply, retainedBytes } from './retained-bytes.js'

/** A fill's answer: the command's reply as Redis sent it (Buffers, arrays, integers, null) and the key's PTTL. */
export type ReplyFill = readonly [reply: unknown, pttlMs: number]

// A key's replies live in one LRU entry; a key read by more distinct commands than this is cached for the first
// ones only (a hash read field by field by a thousand HGETs would otherwise grow one entry without bound).
const MAX_REPLIES_PER_KEY = 64
const GET_OPTIONS = {}

/**
 * One cached reply: as the parser gave it (`raw`), and as a client that decodes replies to strings sees it,
 * worked out once on first use (`decoded`, see decodeReply) so that the fast path converts nothing per hit.
 */
export class CachedReply {
  readonly raw: unknown
  decoded: unknown = NOT_DECODED

  constructor(raw: unknown) {
    this.raw = raw
  }
}

/** `CachedReply.decoded` before anyone asked for it. */
export const NOT_DECODED: unique symbol = Symbol('not decoded')

/** The replies Redis gave for one key, by command signature (see signatureOf), and their estimated bytes. */
class KeyReplies {
  readonly bySignature = new Map<string, CachedReply>()
  bytes = OBJECT_OVERHEAD_BYTES

  constructor(name: string) {
    this.bytes += 2 * name.length
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
  /** The cached reply of `signature` on `name`, or undefined on a miss. */
  get(name: string, signature: string): CachedReply | undefined {
    return this.lru.get(name, GET_OPTIONS)?.bySignature.get(signature)
  }

  /**
   * Fills `signature` of `name` through `fill`, or joins the fill in flight; resolves with the reply. Returns
   * undefined when the cache cannot be filled now (channels down, or the key not admitted).
   */
  load(name: string, signature: string, fill: () => Promise<ReplyFill>): Promise<unknown> | undefined {
    const ticket = this.gate.ticket(name)
    if (ticket === undefined) return undefined
    let flights = this.flights.get(name)
    const flight = flights?.get(signature)
    if (flight !== undefined) return flight
    const started: Promise<unknown> = fill().then(
      ([reply, pttl]) => {
        this.#land(name, signature, started)
        if (this.gate.stillValid(name, ticket)) this.#store(name, signature, reply, pttl)
        return reply
      },
      (error: unknown) => {
        this.#land(name, signature, started)
        throw error
      },
    )
    if (flights === undefined) {
      flights = new Map()
      this.flights.set(name, flights)
    }
    flights.set(signature, started)
    return started
  }

  #land(name: string, signature: string, flight: Promise<unknown>): void {
    const flights = this.flights.get(name)
    if (flights?.get(signature) !== flight) return
    flights.delete(signature)
    if (flights.size === 0) this.flights.delete(name)
  }

  // A key's entry lives ttlFraction of its remaining TTL at its first fill, capped; replies added later share
  // that lifetime (the key's TTL only shrinks with time, and any command that changes it is a write). A reply is
  // counted twice: as Redis sent it, and as the client's decoded copy made on the first hit.
  #store(name: string, signature: string, reply: unknown, pttl: number): void {
    const bytes = OBJECT_OVERHEAD_BYTES + 2 * signature.length + 2 * retainedBytes(reply)
    const replies = this.lru.get(name, GET_OPTIONS)
    if (replies !== undefined) {
      if (replies.bySignature.size >= MAX_REPLIES_PER_KEY || !this.fits(replies.bytes + bytes)) return
      replies.bySignature.set(signature, new CachedReply(ownedReply(reply)))
      replies.bytes += bytes
      // The same entry again, for its new size; its lifetime stays the one its first fill set.
      this.lru.set(name, replies, { size: replies.bytes, noUpdateTTL: true })
      return
    }
    const lifetime = this.lifetime(pttl)
    if (lifetime < 1) return
    const created = new KeyReplies(name)
    if (!this.fits(created.bytes + bytes)) return
    created.bySignature.set(signature, new CachedReply(ownedReply(reply)))
    created.bytes += bytes
    this.lru.set(name, created, { ttl: lifetime, size: created.bytes })
  }
}
