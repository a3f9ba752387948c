import { ProtocolError } from '../errors.js'

/** A RESP simple string (`+OK`), kept apart from bulk strings so that it is sent back as one. */
export class StatusReply {
  constructor(readonly text: string) {}
}

/** An error reply from Redis (`-WRONGTYPE ...`), as the data-plane core and ioredis's parser see it. */
export class ReplyError extends Error {
  override name = 'ReplyError'
}

/**
 * A complete RESP2 or RESP3 reply as values shaped like ioredis's parser gives them to the data-plane core: bulk
 * strings as Buffers (views into `bytes`, not copies), integers as numbers, nil as null, errors as ReplyError.
 * RESP3's richer types come as RESP2 would have carried them (a map as its flat list, a set as an array, a double
 * or big number as its text, a boolean as 1 or 0), so the core holds one form whichever protocol a client speaks.
 * Only for replies the core needs to see; everything else is relayed as bytes. Iterative, with the open
 * aggregates on a stack of its own: a script can return a reply nested far deeper than the JavaScript stack.
 */
export function decodeReply(bytes: Buffer): unknown {
  const open: OpenAggregate[] = []
  let at = 0
  for (;;) {
    const cr = bytes.indexOf(13, at)
    if (cr === -1) throw new ProtocolError('truncated reply')
    const type = bytes[at]
    let next = cr + 2
    let value: unknown
    switch (type) {
      case 43:
        value = new StatusReply(bytes.toString('latin1', at + 1, cr))
        break
      case 45:
        value = new ReplyError(bytes.toString('utf8', at + 1, cr))
        break
      case 58:
        value = headerNumber(bytes, at, cr)
        break
      case 36: {
        const length = headerNumber(bytes, at, cr)
        value = length < 0 ? null : bytes.subarray(next, next + length)
        if (length >= 0) next += length + 2
        break
      }
      case 42: // * array
      case 126: // ~ set
      case 62: // > push
      case 37: // % map
      case 124: {
        // | attributes: metadata ahead of the reply itself, which is what the client asked for
        const length = headerNumber(bytes, at, cr)
        const count = type === 37 || type === 124 ? length * 2 : length
        if (count > 0) {
          open.push({ items: new Array<unknown>(count), filled: 0, attributes: type === 124 })
          at = next
          continue
        }
        value = type === 124 ? ATTRIBUTES : count < 0 ? null : []
        break
      }
      case 95: // _ null
        value = null
        break
      case 44: // , double
      case 40: // ( big number
        value = bytes.subarray(at + 1, cr)
        break
      case 35: // # boolean
        value = bytes[at + 1] === 116 ? 1 : 0
        break
      case 33: // ! blob error
      case 61: {
        // = verbatim string, whose first four bytes name its format ("txt:")
        const length = headerNumber(bytes, at, cr)
        value =
          type === 33
            ? new ReplyError(bytes.toString('utf8', next, next + length))
            : bytes.subarray(next + 4, next + length)
        next += length + 2
        break
      }
      default:
        throw new ProtocolError(
          `unexpected reply type byte ${JSON.stringify(String.fromCharCode(type ?? 0))}`,
        )
    }
    at = next
    // The element is complete: it fills its parent, which may complete in turn.
    while (value !== ATTRIBUTES) {
      const parent = open[open.length - 1]
      if (parent === undefined) return value
      parent.items[parent.filled++] = value
      if (parent.filled < parent.items.length) break
      open.pop()
      value = parent.attributes ? ATTRIBUTES : parent.items
    }
  }
}

/** An aggregate being decoded: its elements so far; attributes are dropped once complete. */
interface OpenAggregate {
  items: unknown[]
  filled: number
  attributes: boolean
}

// A complete attribute: it annotates the element after it and is not a value of its own.
const ATTRIBUTES: unique symbol = Symbol('attributes')

const CRLF = Buffer.from('\r\n')
const NULL_BULK = Buffer.from('$-1\r\n')

function headerNumber(bytes: Buffer, at: number, cr: number): number {
  return Number(bytes.toString('latin1', at + 1, cr))
}

/**
 * `value` as RESP2 bytes, appended to `out`: Buffers and strings as bulk strings, StatusReply as a simple string,
 * numbers as integers, null as a nil bulk string, arrays, and errors (ReplyError or any Error) as `-message`.
 * Iterative like decodeReply, for the same reason.
 */
export function encodeReply(value: unknown, out: Buffer[]): void {
  encodeNested(value, out, NULL_BULK)
}

/** `value` as encodeReply writes it, with `nil` for null (RESP3 writes `_`), at any depth of nesting. */
export function encodeNested(value: unknown, out: Buffer[], nil: Buffer): void {
  if (!Array.isArray(value)) {
    encodeScalar(value, out, nil)
    return
  }
  // The arrays being written, each with the index of its next element.
  const arrays: unknown[][] = [value]
  const indexes: number[] = [0]
  out.push(Buffer.from(`*${value.length}\r\n`))
  while (arrays.length > 0) {
    const top = arrays.length - 1
    const array = arrays[top] as unknown[]
    const index = indexes[top] as number
    if (index === array.length) {
      arrays.pop()
      indexes.pop()
      continue
    }
    indexes[top] = index + 1
    const item = array[index]
    if (Array.isArray(item)) {
      out.push(Buffer.from(`*${item.length}\r\n`))
      arrays.push(item)
      indexes.push(0)
    } else encodeScalar(item, out, nil)
  }
}

function encodeScalar(value: unknown, out: Buffer[], nil: Buffer): void {
  if (Buffer.isBuffer(value)) {
    out.push(Buffer.from(`$${value.length}\r\n`), value, CRLF)
  } else if (typeof value === 'string') {
    const bytes = Buffer.from(value)
    out.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF)
  } else if (value === null || value === undefined) {
    out.push(nil)
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    out.push(Buffer.from(`:${value}\r\n`))
  } else if (value instanceof StatusReply) {
    out.push(Buffer.from(`+${value.text}\r\n`))
  } else if (value instanceof Error) {
    out.push(errorReply(value.message))
  } else {
    encodeScalar(String(value), out, nil)
  }
}

/** `-<message>` with CR and LF replaced, as an error line cannot hold them. */
export function errorReply(message: string): Buffer {
  return Buffer.from(`-${message.replace(/[\r\n]+/g, ' ')}\r\n`)
}

/** A simple string reply. */
export function statusReply(text: string): Buffer {
  return Buffer.from(`+${text}\r\n`)
}

/** The RESP2 bytes of `value` in one Buffer. */
export function replyBytes(value: unknown): Buffer {
  const out: Buffer[] = []
  encodeReply(value, out)
  return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out)
}
