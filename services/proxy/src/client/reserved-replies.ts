import type { ReplySink } from '../backend/reply-sink.js'
import { decodeReply, replyBytes } from '../resp/reply-codec.js'
import { ReplyScanner } from '../resp/reply-scanner.js'
import { resp3Bytes } from '../resp/resp3-reply.js'
import type { ReplySlot } from './output-queue.js'
import type { ReservedNames } from './reserved-names.js'

/** Where a reply lists names: the list itself (KEYS, PUBSUB CHANNELS), or its second element (SCAN's page). */
export type Listing = 'list' | 'page'

/**
 * The sink for a request's reply: `slot` itself, unless the reply lists names (KEYS, SCAN, PUBSUB CHANNELS and
 * SHARDCHANNELS), whose Heatsink names are then left out. On a Cluster the fanned-out replies are merged before
 * they reach this sink, so one filter covers every master.
 */
export function withoutReserved(
  names: ReservedNames,
  name: string,
  args: Buffer[],
  slot: ReplySlot,
  resp3: boolean,
): ReplySink {
  const listing = listingOf(name, args)
  return listing === undefined ? slot : new ListingFilter(names, [listing], slot, resp3, false)
}

/** Whether, and where, the reply of `name` lists key or channel names. */
export function listingOf(name: string, args: Buffer[]): Listing | undefined {
  return name === 'keys'
    ? 'list'
    : name === 'scan'
      ? 'page'
      : name === 'pubsub'
        ? channelListing(args)
        : undefined
}

/**
 * The sink for EXEC's reply when the transaction queued commands that list names: `listings` holds, per queued
 * command in order, where its reply lists them. An EXEC whose array is not one reply per queued command (aborted,
 * or a WATCH failure's null) passes unchanged.
 */
export function withoutReservedInExec(
  names: ReservedNames,
  listings: ReadonlyArray<Listing | undefined>,
  slot: ReplySlot,
  resp3: boolean,
): ReplySink {
  return listings.every((listing) => listing === undefined)
    ? slot
    : new ListingFilter(names, listings, slot, resp3, true)
}

function channelListing(args: Buffer[]): Listing | undefined {
  const subcommand = args[0]?.toString('latin1').toLowerCase()
  return subcommand === 'channels' || subcommand === 'shardchannels' ? 'list' : undefined
}

// Gathers the reply, drops reserved names from its list (in EXEC's array, from each listed reply), and sends Redis's
// own bytes when nothing was dropped. A SCAN page may come out shorter or empty, which SCAN's contract allows; its
// cursor is Redis's.
class ListingFilter implements ReplySink {
  readonly #names: ReservedNames
  readonly #listings: ReadonlyArray<Listing | undefined>
  readonly #slot: ReplySlot
  readonly #resp3: boolean
  readonly #exec: boolean
  readonly #parts: Buffer[] = []

  constructor(
    names: ReservedNames,
    listings: ReadonlyArray<Listing | undefined>,
    slot: ReplySlot,
    resp3: boolean,
    exec: boolean,
  ) {
    this.#names = names
    this.#listings = listings
    this.#slot = slot
    this.#resp3 = resp3
    this.#exec = exec
  }

  data(bytes: Buffer): void {
    this.#parts.push(bytes)
  }

  end(): void {
    const bytes = Buffer.concat(this.#parts)
    this.#slot.complete(this.#exec ? this.#execFiltered(bytes) : this.#filtered(bytes, this.#listings[0]))
  }

  // EXEC's array with each listing reply filtered, every other reply's bytes Redis's own. An array of another
  // length (or no array: EXECABORT, a WATCH failure's null) is Redis's whole.
  #execFiltered(bytes: Buffer): Buffer {
    const lf = bytes.indexOf(10)
    if (bytes[0] !== ARRAY || lf === -1) return bytes
    if (Number(bytes.toString('latin1', 1, lf - 1)) !== this.#listings.length) return bytes
    const parts: Buffer[] = [bytes.subarray(0, lf + 1)]
    let at = lf + 1
    for (const listing of this.#listings) {
      const end = new ReplyScanner().scan(bytes, at)
      if (end === -1) return bytes
      const item = bytes.subarray(at, end)
      parts.push(listing === undefined ? item : this.#filtered(item, listing))
      at = end
    }
    return Buffer.concat(parts)
  }

  // One reply's bytes without reserved names in its list; the very bytes when it had none (or lists nothing).
  #filtered(bytes: Buffer, listing: Listing | undefined): Buffer {
    if (listing === undefined) return bytes
    const reply = decodeReply(bytes)
    const list = listing === 'list' ? reply : Array.isArray(reply) ? reply[1] : undefined
    if (!Array.isArray(list)) return bytes
    const kept = list.filter((item) => !(Buffer.isBuffer(item) && this.#names.reserved(item)))
    if (kept.length === list.length) return bytes
    const filtered = listing === 'list' ? kept : [(reply as unknown[])[0], kept]
    return this.#resp3 ? resp3Bytes(filtered, 'plain') : replyBytes(filtered)
  }

  fail(error: Error): void {
    this.#slot.fail(error)
  }
}

/**
 * Wraps what a subscribed connection relays to its client so that messages on Heatsink's channels (a
 * `PSUBSCRIBE *` matches them) never reach it. Replies that cannot be messages stream through as they arrive;
 * arrays and pushes are held until complete, then relayed or dropped whole.
 */
export function withoutReservedMessages(
  names: ReservedNames,
  relay: (chunk: Buffer) => void,
): (chunk: Buffer) => void {
  const scanner = new ReplyScanner()
  let held: Buffer[] = []
  // Whether the reply in progress is held (it may be a message) or relayed as it comes.
  let holding = false
  // Bytes the scanner cannot read as replies (it throws): from then on relayed unread, never a crash.
  let unreadable = false
  return (chunk) => {
    if (unreadable) {
      relay(chunk)
      return
    }
    let start = 0
    let out = 0
    while (start < chunk.length) {
      if (scanner.idle) holding = chunk[start] === ARRAY || chunk[start] === PUSH
      let end: number
      try {
        end = scanner.scan(chunk, start)
      } catch {
        unreadable = true
        if (held.length > 0) relay(Buffer.concat(held))
        held = []
        relay(chunk.subarray(out))
        return
      }
      if (end === -1) {
        if (holding) {
          if (out < start) relay(chunk.subarray(out, start))
          held.push(chunk.subarray(start))
          return
        }
        break
      }
      if (holding) {
        const reply =
          held.length === 0 ? chunk.subarray(start, end) : Buffer.concat([...held, chunk.subarray(0, end)])
        const hidden = isReservedMessage(names, reply)
        if (held.length > 0) {
          held = []
          if (!hidden) relay(reply)
          out = end
        } else if (hidden) {
          if (out < start) relay(chunk.subarray(out, start))
          out = end
        }
      }
      start = end
    }
    if (out < chunk.length) relay(out === 0 ? chunk : chunk.subarray(out))
  }
}

const ARRAY = 42
const PUSH = 62
const MESSAGE = Buffer.from('message')
const PMESSAGE = Buffer.from('pmessage')
const SMESSAGE = Buffer.from('smessage')

// A message (`message`, `smessage`: kind, channel, payload; `pmessage`: kind, pattern, channel, payload) whose
// channel is reserved. Read from the bytes: only flat arrays of bulk strings are looked into.
function isReservedMessage(names: ReservedNames, reply: Buffer): boolean {
  const header = bulkAfterLine(reply, 0)
  if (header === undefined) return false
  const kind = reply.subarray(header.start, header.end)
  let channel: Bulk | undefined
  if (kind.equals(MESSAGE) || kind.equals(SMESSAGE)) channel = bulkAt(reply, header.next)
  else if (kind.equals(PMESSAGE)) {
    const pattern = bulkAt(reply, header.next)
    channel = pattern === undefined ? undefined : bulkAt(reply, pattern.next)
  }
  return channel !== undefined && names.reserved(reply.subarray(channel.start, channel.end))
}

interface Bulk {
  start: number
  end: number
  next: number
}

// The first bulk string after the aggregate's header line.
function bulkAfterLine(reply: Buffer, at: number): Bulk | undefined {
  const lf = reply.indexOf(10, at)
  return lf === -1 ? undefined : bulkAt(reply, lf + 1)
}

function bulkAt(reply: Buffer, at: number): Bulk | undefined {
  if (reply[at] !== 36) return undefined
  const cr = reply.indexOf(13, at)
  if (cr === -1) return undefined
  const length = Number(reply.toString('latin1', at + 1, cr))
  if (!Number.isInteger(length) || length < 0) return undefined
  const start = cr + 2
  return { start, end: start + length, next: start + length + 2 }
}
