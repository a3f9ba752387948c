import { ProtocolError } from '../errors.js'
import { bufferView } from './buffer-view.js'
import { COMMAND_NAMES } from './command-names.js'
import { splitInlineArguments } from './inline-arguments.js'

/** One client request: its name, its arguments as Buffers, and the exact bytes it came in. */
export class Request {
  /** The command name in lower case, as the command table spells it. */
  readonly name: string
  /** The arguments after the name; views into the bytes received, never copied. */
  readonly args: Buffer[]
  readonly #buffer: Buffer
  readonly #start: number
  readonly #end: number
  #raw: Buffer | undefined

  constructor(name: string, args: Buffer[], buffer: Buffer, start: number, end: number) {
    this.name = name
    this.args = args
    this.#buffer = buffer
    this.#start = start
    this.#end = end
  }

  /**
   * The request's own bytes, to forward unchanged (twemproxy's rule); a multibulk form for inline requests. Made
   * when first asked for: a request answered from L1 never needs them.
   */
  get raw(): Buffer {
    this.#raw ??= bufferView(this.#buffer, this.#start, this.#end)
    return this.#raw
  }
}

// Redis' own limits (server.h): a request of more arguments, or a bulk string longer, is a protocol error.
const MAX_ARGUMENTS = 1024 * 1024
export const MAX_BULK_BYTES = 512 * 1024 * 1024
const MAX_INLINE_BYTES = 64 * 1024

// What a parser holds between requests: one buffer for all of them (it is only ever read), not one per connection.
const EMPTY = Buffer.alloc(0)

const CR = 13
const LF = 10
const STAR = 42
const DOLLAR = 36

// parse() outcomes other than the end of a complete request: more bytes are needed (at least `needed` from the
// request's start when known, so a large bulk string is gathered without re-parsing every chunk).
const INCOMPLETE = -1

/**
 * Turns the bytes a client sends into requests: RESP multibulk (what every client library sends) and inline
 * commands (telnet, redis-cli's inline mode, redis-benchmark's PING_INLINE), in any chunking down to one byte
 * at a time. Hand-written because it is the proxy's hot path: a request is parsed where it lies in the chunk,
 * its arguments are views of it, and a request cut inside a large bulk string is gathered into one buffer of its
 * known size, each byte copied once. Throws ProtocolError with Redis' own wording for what Redis refuses.
 */
export class RequestParser {
  #buffer: Buffer = EMPTY
  #offset = 0
  // While a request known to need more bytes than have come is incomplete: a buffer of exactly that size, filled
  // as chunks arrive (`#gathered` so far). A 512 MB value is thus held once, never as chunks plus their join.
  #gather: Buffer | undefined
  #gathered = 0

  /** Feeds one chunk; calls `onRequest` for each complete request in order. */
  feed(chunk: Buffer, onRequest: (request: Request) => void): void {
    const gather = this.#gather
    if (gather !== undefined) {
      const take = Math.min(chunk.length, gather.length - this.#gathered)
      chunk.copy(gather, this.#gathered, 0, take)
      this.#gathered += take
      if (this.#gathered < gather.length) return
      this.#gather = undefined
      this.#buffer = gather
      this.#offset = 0
      this.#parse(onRequest)
      // Bytes after the gathered ones: the rest of the request, or the next ones.
      if (take < chunk.length) this.feed(chunk.subarray(take), onRequest)
      return
    }
    if (this.#offset < this.#buffer.length) {
      this.#buffer = Buffer.concat([this.#buffer.subarray(this.#offset), chunk])
      this.#offset = 0
    } else {
      this.#buffer = chunk
      this.#offset = 0
    }
    this.#parse(onRequest)
  }

  #parse(onRequest: (request: Request) => void): void {
    const buffer = this.#buffer
    while (this.#offset < buffer.length) {
      const start = this.#offset
      const request = buffer[start] === STAR ? this.#multibulk(buffer, start) : this.#inline(buffer, start)
      if (request === undefined) return
      if (request !== null) onRequest(request)
    }
    // Every byte is part of a request handed on: the chunk is theirs now, and an idle connection keeps none.
    this.#buffer = EMPTY
    this.#offset = 0
  }

  /** Bytes received and not yet part of a complete request. */
  get pendingBytes(): number {
    return this.#gather !== undefined ? this.#gathered : this.#buffer.length - this.#offset
  }

  // A complete request, null for one Redis ignores (an empty multibulk), or undefined when more bytes are needed.
  #multibulk(buffer: Buffer, start: number): Request | null | undefined {
    const count = this.#header(buffer, start, start, 'invalid multibulk length')
    if (count === undefined) return undefined
    if (count > MAX_ARGUMENTS) throw new ProtocolError('invalid multibulk length')
    let position = headerEnd + 2
    if (count <= 0) {
      this.#offset = position
      return null
    }
    let name = ''
    const args = new Array<Buffer>(count - 1)
    for (let i = 0; i < count; i++) {
      if (position >= buffer.length) return this.#incomplete(buffer, start, 0)
      if (buffer[position] !== DOLLAR) {
        throw new ProtocolError(`expected '$', got '${String.fromCharCode(buffer[position] as number)}'`)
      }
      const length = this.#header(buffer, start, position, 'invalid bulk length')
      if (length === undefined) return undefined
      if (length < 0 || length > MAX_BULK_BYTES) throw new ProtocolError('invalid bulk length')
      const dataStart = headerEnd + 2
      const dataEnd = dataStart + length
      if (dataEnd + 2 > buffer.length) return this.#incomplete(buffer, start, dataEnd + 2 - start)
      if (i === 0) name = COMMAND_NAMES.lower(buffer, dataStart, dataEnd)
      else args[i - 1] = bufferView(buffer, dataStart, dataEnd)
      position = dataEnd + 2
    }
    this.#offset = position
    return new Request(name, args, buffer, start, position)
  }

  /**
   * The number on the header line at `line` (`*count` or `$length`) of the request at `start`, with the line's CR
   * left in headerEnd; undefined when the line is not complete yet. Nearly every header is a few digits, read in
   * one pass; anything else takes lineEnd and parseLength, which tell an incomplete line from a malformed one.
   */
  #header(buffer: Buffer, start: number, line: number, error: string): number | undefined {
    const simple = simpleLength(buffer, line + 1)
    if (simple !== NOT_SIMPLE) return simple
    headerEnd = lineEnd(buffer, line + 1)
    if (headerEnd === INCOMPLETE) return this.#incompleteLine(buffer, start, line)
    return parseLength(buffer, line + 1, headerEnd, error)
  }

  #inline(buffer: Buffer, start: number): Request | null | undefined {
    const newline = buffer.indexOf(LF, start)
    if (newline === INCOMPLETE) {
      if (buffer.length - start > MAX_INLINE_BYTES) throw new ProtocolError('too big inline request')
      return this.#incomplete(buffer, start, 0)
    }
    this.#offset = newline + 1
    const end = newline > start && buffer[newline - 1] === CR ? newline - 1 : newline
    const argv = splitInlineArguments(buffer.subarray(start, end))
    const first = argv[0]
    if (first === undefined) return null
    const raw = encodeRequest(argv)
    return new Request(COMMAND_NAMES.lower(first, 0, first.length), argv.slice(1), raw, 0, raw.length)
  }

  // A header line without its end: Redis refuses one longer than an inline request may be.
  #incompleteLine(buffer: Buffer, start: number, lineStart: number): undefined {
    if (buffer.length - lineStart > MAX_INLINE_BYTES) throw new ProtocolError('too big mbulk count string')
    return this.#incomplete(buffer, start, 0)
  }

  // Keeps the incomplete request's bytes; with `needed` known, later chunks fill a buffer of that size.
  #incomplete(buffer: Buffer, start: number, needed: number): undefined {
    const rest = buffer.subarray(start)
    this.#offset = 0
    if (needed > rest.length) {
      this.#gather = Buffer.allocUnsafe(needed)
      this.#gathered = rest.copy(this.#gather)
      this.#buffer = EMPTY
    } else {
      this.#buffer = rest
    }
    return undefined
  }
}

// simpleLength's answer when the line is not a plain count of at most 12 digits whose CRLF has arrived.
const NOT_SIMPLE = -2
// Where the header line last read ends (its CR); a module variable, so reading a header allocates nothing.
let headerEnd = 0

/** The count or length on the line starting at `from` when it is plain digits and complete, else NOT_SIMPLE. */
function simpleLength(buffer: Buffer, from: number): number {
  // The CR must have its LF after it, as lineEnd requires.
  const limit = Math.min(buffer.length - 1, from + 13)
  let value = 0
  for (let i = from; i < limit; i++) {
    const byte = buffer[i] as number
    if (byte === CR) {
      if (i === from) return NOT_SIMPLE
      headerEnd = i
      return value
    }
    const digit = byte - 48
    if (digit < 0 || digit > 9) return NOT_SIMPLE
    value = value * 10 + digit
  }
  return NOT_SIMPLE
}

/** The index of the CR ending the line that starts at `from`, or -1 when the line is not complete yet. */
function lineEnd(buffer: Buffer, from: number): number {
  const cr = buffer.indexOf(CR, from)
  if (cr === -1 || cr + 1 >= buffer.length) return INCOMPLETE
  return cr
}

/** A decimal integer between `from` and `to` (optionally negative), as Redis' string2ll accepts it. */
function parseLength(buffer: Buffer, from: number, to: number, error: string): number {
  if (from === to || to - from > 12) throw new ProtocolError(error)
  let negative = false
  let i = from
  if (buffer[i] === 45) {
    negative = true
    i++
    if (i === to) throw new ProtocolError(error)
  }
  let value = 0
  for (; i < to; i++) {
    const digit = (buffer[i] as number) - 48
    if (digit < 0 || digit > 9) throw new ProtocolError(error)
    value = value * 10 + digit
  }
  return negative ? -value : value
}

/** A request in RESP multibulk form. */
export function encodeRequest(argv: readonly (Buffer | string)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${argv.length}\r\n`)]
  for (const arg of argv) {
    const bytes = typeof arg === 'string' ? Buffer.from(arg) : arg
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF)
  }
  return Buffer.concat(parts)
}

const CRLF = Buffer.from('\r\n')
