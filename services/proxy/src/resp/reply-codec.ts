import { ProtocolError } from '../errors.js'

/** A RESP simple string (`+OK`), kept apart from bulk strings so that it is sent back as one. */
export class StatusReply {
  constructor(readonly text: string) {}
}

/** An error reply from Redis (`-WRONGTYPE ...`), as the data-plane core and ioredis's parser see it. */
export class ReplyError extends Error {
  override name = 'ReplyError'
}

/** One reply decoded: where it ends, and its value (Buffer, StatusReply, number, null, array, ReplyError). */
interface Decoded {
  value: unknown
  end: number
}

const CRLF = Buffer.from('\r\n')
const NULL_BULK = Buffer.from('$-1\r\n')

/**
 * A complete RESP2 or RESP3 reply as values shaped like ioredis's parser gives them to the data-plane core: bulk
 * strings as Buffers (views into `bytes`, not copies), integers as numbers, nil as null, errors as ReplyError.
 * RESP3's richer types come as RESP2 would have carried them (a map as its flat list, a set as an array, a double
 * or big number as its text, a boolean as 1 or 0), so the core holds one form whichever protocol a client speaks.
 * Only for replies the core needs to see; everything else is relayed as bytes.
 */
export function decodeReply(bytes: Buffer): unknown {
  return decodeAt(bytes, 0).value
}

function decodeAt(bytes: Buffer, at: number): Decoded {
  const cr = bytes.indexOf(13, at)
  if (cr === -1) throw new ProtocolError('truncated reply')
  const text = bytes.toString('latin1', at + 1, cr)
  const next = cr + 2
  switch (bytes[at]) {
    case 43:
      return { value: new StatusReply(text), end: next }
    case 45:
      return { value: new ReplyError(bytes.toString('utf8', at + 1, cr)), end: next }
    case 58:
      return { value: Number(text), end: next }
    case 36: {
      const length = Number(text)
      if (length < 0) return { value: null, end: next }
      return { value: bytes.subarray(next, next + length), end: next + length + 2 }
    }
    case 42: // * array
    case 126: // ~ set
    case 62: // > push
      return decodeItems(bytes, next, Number(text))
    case 37: // % map
      return decodeItems(bytes, next, Number(text) * 2)
    case 95: // _ null
      return { value: null, end: next }
    case 44: // , double
    case 40: // ( big number
      return { value: bytes.subarray(at + 1, cr), end: next }
    case 35: // # boolean
      return { value: text === 't' ? 1 : 0, end: next }
    case 33: // ! blob error
    case 61: {
      // = verbatim string, whose first four bytes name its format ("txt:")
      const length = Number(text)
      const end = next + length + 2
      if (bytes[at] === 33) return { value: new ReplyError(bytes.toString('utf8', next, next + length)), end }
      return { value: bytes.subarray(next + 4, next + length), end }
    }
    case 124: {
      // | attributes: metadata ahead of the reply itself, which is what the client asked for
      const attributes = decodeItems(bytes, next, Number(text) * 2)
      return decodeAt(bytes, attributes.end)
    }
    default:
      throw new ProtocolError(
        `unexpected reply type byte ${JSON.stringify(String.fromCharCode(bytes[at] ?? 0))}`,
      )
  }
}

function decodeItems(bytes: Buffer, at: number, count: number): Decoded {
  if (count < 0) return { value: null, end: at }
  const items = new Array<unknown>(count)
  let position = at
  for (let i = 0; i < count; i++) {
    const item = decodeAt(bytes, position)
    items[i] = item.value
    position = item.end
  }
  return { value: items, end: position }
}

/**
 * `value` as RESP2 bytes, appended to `out`: Buffers and strings as bulk strings, StatusReply as a simple string,
 * numbers as integers, null as a nil bulk string, arrays, and errors (ReplyError or any Error) as `-message`.
 */
export function encodeReply(value: unknown, out: Buffer[]): void {
  if (Buffer.isBuffer(value)) {
    out.push(Buffer.from(`$${value.length}\r\n`), value, CRLF)
  } else if (typeof value === 'string') {
    const bytes = Buffer.from(value)
    out.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF)
  } else if (value === null || value === undefined) {
    out.push(NULL_BULK)
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    out.push(Buffer.from(`:${value}\r\n`))
  } else if (Array.isArray(value)) {
    out.push(Buffer.from(`*${value.length}\r\n`))
    for (const item of value) encodeReply(item, out)
  } else if (value instanceof StatusReply) {
    out.push(Buffer.from(`+${value.text}\r\n`))
  } else if (value instanceof Error) {
    out.push(errorReply(value.message))
  } else {
    encodeReply(String(value), out)
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
