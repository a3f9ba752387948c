import { FALL_THROUGH } from '@heatsink/agent'
import type { ReplySink } from '../backend/reply-sink.js'
import { decodeReply, encodeReply, errorReply, ReplyError, StatusReply } from '../resp/reply-codec.js'
import type { ReplySlot } from './output-queue.js'

type Settle = (error: Error | null, reply: unknown) => unknown

/**
 * The reply to a command the data-plane core sent with a settle hook (a watched miss, a coalesced read, the rest
 * of an MGET, a write to a registered key): decoded for the core, and relayed as the bytes Redis sent when the
 * core hands the same reply back, re-encoded only when it changed it.
 */
export class SettledSink implements ReplySink {
  readonly #slot: ReplySlot
  readonly #settle: Settle
  #parts: Buffer[] = []
  #bytes = 0

  constructor(slot: ReplySlot, settle: Settle) {
    this.#slot = slot
    this.#settle = settle
  }

  data(bytes: Buffer): void {
    this.#parts.push(bytes)
    this.#bytes += bytes.length
  }

  end(): void {
    const parts = this.#parts
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, this.#bytes)
    this.#parts = []
    const value = decodeReply(bytes)
    const outcome = value instanceof ReplyError ? this.#settle(value, undefined) : this.#settle(null, value)
    if (outcome === value) this.#slot.complete(bytes)
    else this.#slot.complete(replyBytes(outcome, false))
  }

  fail(error: Error): void {
    const outcome = this.#settle(error, undefined)
    this.#slot.complete(errorReply(outcome instanceof Error ? outcome.message : error.message))
  }
}

/**
 * Answers `slot` with what a deferred route resolves to (an L1 fill, a coalesced read, a split key's aggregate);
 * a route that falls through is sent to Redis after all (`send`).
 */
export function settleDeferred(
  reply: Promise<unknown>,
  slot: ReplySlot,
  write: boolean,
  send: () => void,
): void {
  reply.then(
    (value) => slot.complete(replyBytes(value, write)),
    (error: unknown) => {
      if (error === FALL_THROUGH) send()
      else slot.complete(errorReply(error instanceof Error ? error.message : String(error)))
    },
  )
}

/**
 * A reply value as RESP2 bytes. Values from ioredis (a split key's writes) arrive as strings: a write's 'OK' was a
 * status reply, every other string a bulk string.
 */
export function replyBytes(value: unknown, write: boolean): Buffer {
  const out: Buffer[] = []
  encodeReply(write && value === 'OK' ? new StatusReply('OK') : value, out)
  return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out)
}
