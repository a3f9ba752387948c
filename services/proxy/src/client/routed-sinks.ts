import { FALL_THROUGH } from '@heatsink/agent'
import type { CommandSpec, ReplyShape } from '@heatsink/commands'
import type { ReplySink } from '../backend/reply-sink.js'
import { decodeReply, errorReply, ReplyError, replyBytes, StatusReply } from '../resp/reply-codec.js'
import { resp3Bytes, resp3Shape } from '../resp/resp3-reply.js'
import type { ReplySlot } from './output-queue.js'

type Settle = (error: Error | null, reply: unknown) => unknown

/** A reply value the core made (a cached, shared, merged or split reply) as bytes of the client's protocol. */
export type ReplyEncoder = (value: unknown) => Buffer

/**
 * The reply to a command the data-plane core sent with a settle hook (a watched miss, a coalesced read, the rest
 * of an MGET, a write to a registered key): decoded for the core, and relayed as the bytes Redis sent when the
 * core hands the same reply back, re-encoded only when it changed it. A bulk string of STREAM_BYTES or more is
 * not gathered: it streams through like any relayed reply, and the core is told it cannot see it (FALL_THROUGH:
 * readers sharing a coalesced read then ask Redis themselves), so a 512 MB value is never held whole here.
 */
export class SettledSink implements ReplySink {
  readonly #slot: ReplySlot
  readonly #settle: Settle
  readonly #encode: ReplyEncoder
  #parts: Buffer[] = []
  #bytes = 0
  #streaming = false

  constructor(slot: ReplySlot, settle: Settle, encode: ReplyEncoder) {
    this.#slot = slot
    this.#settle = settle
    this.#encode = encode
  }

  data(bytes: Buffer): void {
    if (this.#streaming) this.#slot.push(bytes)
    else if (this.#bytes === 0 && isLargeBulk(bytes)) {
      this.#streaming = true
      this.#slot.push(bytes)
    } else {
      this.#parts.push(bytes)
      this.#bytes += bytes.length
    }
  }

  end(): void {
    if (this.#streaming) {
      this.#settle(FALL_THROUGH, undefined)
      this.#slot.finish()
      return
    }
    const parts = this.#parts
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, this.#bytes)
    this.#parts = []
    const value = decodeReply(bytes)
    const outcome = value instanceof ReplyError ? this.#settle(value, undefined) : this.#settle(null, value)
    if (outcome === value) this.#slot.complete(bytes)
    else this.#slot.complete(this.#encode(outcome))
  }

  fail(error: Error): void {
    const outcome = this.#settle(error, undefined)
    if (this.#streaming) this.#slot.fail(error)
    else this.#slot.complete(errorReply(outcome instanceof Error ? outcome.message : error.message))
  }

  backlogged(resume: () => void): boolean {
    return this.#streaming && this.#slot.backlogged(resume)
  }
}

// Replies at least this large are relayed without the core seeing them.
const STREAM_BYTES = 1024 * 1024

// Whether a reply's first bytes are the header of a bulk string of STREAM_BYTES or more.
function isLargeBulk(bytes: Buffer): boolean {
  if (bytes[0] !== 36) return false
  const cr = bytes.indexOf(13)
  return cr > 0 && Number(bytes.toString('latin1', 1, cr)) >= STREAM_BYTES
}

/**
 * Answers `slot` with what a deferred route resolves to (an L1 fill, a coalesced read, a split key's aggregate);
 * a route that falls through is sent to Redis after all (`send`).
 */
export function settleDeferred(
  reply: Promise<unknown>,
  slot: ReplySlot,
  encode: ReplyEncoder,
  send: () => void,
): void {
  reply.then(
    (value) => slot.complete(encode(value)),
    (error: unknown) => {
      if (error === FALL_THROUGH) send()
      else slot.complete(errorReply(error instanceof Error ? error.message : String(error)))
    },
  )
}

/**
 * The encoder for one command's reply (`spec`: the command's, undefined for one the table does not know). RESP3
 * takes the command's reply shape. Values from ioredis (L1 fills, a split key's writes) arrive with status replies
 * as plain strings: see asStatus.
 */
export function replyEncoder(resp3: boolean, spec: CommandSpec | undefined, args: Buffer[]): ReplyEncoder {
  const write = spec?.access === 'write'
  const shape = spec?.reply
  if (!resp3) return shape === 'status' ? RESP2_STATUS : write ? RESP2_WRITE : RESP2_READ
  const resp3Type = resp3Shape(shape, args)
  return (value) => resp3Bytes(asStatus(shape, value, write), resp3Type)
}

const RESP2_READ: ReplyEncoder = (value) => replyBytes(value)
const RESP2_WRITE: ReplyEncoder = (value) => replyBytes(asStatus(undefined, value, true))
const RESP2_STATUS: ReplyEncoder = (value) => replyBytes(asStatus('status', value, false))

/**
 * A reply that Redis sent as a simple string, as one again: a write's 'OK', and the reply of a read whose shape is
 * a status (TYPE); every other string was a bulk string.
 */
export function asStatus(shape: ReplyShape | undefined, value: unknown, write: boolean): unknown {
  if (write && value === 'OK') return new StatusReply('OK')
  if (shape === 'status' && (typeof value === 'string' || Buffer.isBuffer(value)))
    return new StatusReply(value.toString())
  return value
}
