import { ProtocolError } from '../errors.js'
import { bufferView } from './buffer-view.js'

const CR = 13
const LF = 10
const NOT_DONE = -1

/**
 * Finds where each reply ends in the bytes a Redis server sends, without decoding them, so that replies can be
 * relayed as they arrive (a 512 MB value streams through in the chunks it came in, never held whole). Keeps
 * its place across chunks: the open aggregates' remaining element counts, the bytes left of a bulk payload,
 * and a header line cut by a chunk boundary. RESP2 and RESP3 (for clients that said HELLO 3).
 */
export class ReplyScanner {
  // Elements still expected by each open aggregate, innermost last.
  readonly #open: number[] = []
  // Bytes of a bulk payload (with its CRLF) still to come.
  #payloadLeft = 0
  // A header line begun in an earlier chunk.
  #partialLine: Buffer | undefined
  // A RESP3 attribute precedes the reply it annotates: once the attribute is done, the reply still follows.
  #attributes = 0

  /**
   * Scans `chunk` from `from`; returns the index just past the end of the current reply, or -1 when the chunk
   * ends inside it (call again with the next chunk from 0).
   */
  scan(chunk: Buffer, from: number): number {
    let i = from
    const n = chunk.length
    while (i < n) {
      if (this.#payloadLeft > 0) {
        const take = Math.min(this.#payloadLeft, n - i)
        i += take
        this.#payloadLeft -= take
        if (this.#payloadLeft > 0) return NOT_DONE
        if (this.#elementDone()) return i
        continue
      }
      const newline = chunk.indexOf(LF, i)
      if (newline === -1) {
        const rest = chunk.subarray(i)
        this.#partialLine =
          this.#partialLine === undefined ? Buffer.from(rest) : Buffer.concat([this.#partialLine, rest])
        return NOT_DONE
      }
      let line: Buffer
      if (this.#partialLine === undefined) line = bufferView(chunk, i, newline + 1)
      else {
        line = Buffer.concat([this.#partialLine, chunk.subarray(i, newline + 1)])
        this.#partialLine = undefined
      }
      i = newline + 1
      if (this.#header(line)) return i
    }
    return NOT_DONE
  }

  /** Whether the scanner is between replies (nothing of a reply seen yet). */
  get idle(): boolean {
    return this.#open.length === 0 && this.#payloadLeft === 0 && this.#partialLine === undefined
  }

  // One header line (type byte, text, CRLF); true when it completes the reply.
  #header(line: Buffer): boolean {
    const type = line[0]
    switch (type) {
      case 43: // + simple string
      case 45: // - error
      case 58: // : integer
      case 95: // _ null
      case 44: // , double
      case 35: // # boolean
      case 40: // ( big number
        return this.#elementDone()
      case 36: // $ bulk string
      case 61: // = verbatim string
      case 33: {
        // ! bulk error
        const length = lengthOf(line)
        if (length < 0) return this.#elementDone()
        this.#payloadLeft = length + 2
        return false
      }
      case 42: // * array
      case 126: // ~ set
      case 62: // > push
        return this.#aggregate(lengthOf(line))
      case 37: // % map
        return this.#aggregate(lengthOf(line) * 2)
      case 124: // | attribute: its pairs, then the reply itself
        this.#attributes++
        return this.#aggregate(lengthOf(line) * 2)
      default:
        throw new ProtocolError(
          `unexpected reply type byte ${JSON.stringify(String.fromCharCode(type ?? 0))}`,
        )
    }
  }

  #aggregate(count: number): boolean {
    if (count <= 0) return this.#elementDone()
    this.#open.push(count)
    return false
  }

  // An element ended: close every aggregate it completes; true when the whole reply is done.
  #elementDone(): boolean {
    const open = this.#open
    while (open.length > 0) {
      const last = open.length - 1
      const left = (open[last] as number) - 1
      if (left > 0) {
        open[last] = left
        return false
      }
      open.pop()
    }
    if (this.#attributes > 0) {
      this.#attributes--
      return false
    }
    return true
  }
}

// The signed decimal after the type byte, up to CR.
function lengthOf(line: Buffer): number {
  let end = line.length - 1
  if (line[end] === LF && line[end - 1] === CR) end--
  const value = Number(line.toString('latin1', 1, end))
  if (!Number.isInteger(value))
    throw new ProtocolError(`invalid length in reply header ${JSON.stringify(line.toString('latin1'))}`)
  return value
}
