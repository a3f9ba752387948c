import type { Socket } from 'node:net'
import { connect as connectTls } from 'node:tls'
import Denque from 'denque'
import { BackendLostError, BackendUnreachableError } from '../errors.js'
import { JoinedWrites } from '../joined-writes.js'
import { bufferView } from '../resp/buffer-view.js'
import { ReplyScanner } from '../resp/reply-scanner.js'
import { encodeRequest } from '../resp/request-parser.js'
import { type ChunkReceiver, connectReading, receiveReads } from '../shared-read-buffer.js'
import type { BackendAddress } from './backend-address.js'
import { CheckedSink, type ReplySink } from './reply-sink.js'

/**
 * One TCP (or TLS) connection to the backend Redis. Requests are joined over the event loop turn, so a batch
 * leaves in one write; replies come back in the same order (RESP has no ids), so each is
 * delivered to the sink at the front of the queue, piece by piece as the bytes arrive. Logs in (AUTH) and
 * selects the address's database before anything else, and speaks RESP3 when asked to. When the connection fails, every request still waiting
 * is failed with BackendLostError; the owner opens a new connection for later requests.
 */
export class BackendConnection implements ChunkReceiver {
  readonly #socket: Socket
  readonly #scanner = new ReplyScanner()
  readonly #waiting = new Denque<ReplySink>()
  readonly #onClose: (connection: BackendConnection) => void
  readonly #onLatency: ((seconds: number) => void) | undefined
  #sent = 0
  readonly #requests: JoinedWrites
  #closed = false
  #tunnelTo: ((chunk: Buffer) => void) | undefined
  #failure: Error | undefined
  #closedByProxy = false
  #connected = false
  // The last chunk ended inside a reply: the next one starts with that reply's rest, not a new reply.
  #midReply = false
  readonly #onReadonly: (() => void) | undefined

  constructor(
    address: BackendAddress,
    onClose: (connection: BackendConnection) => void = () => {},
    onLatency?: (seconds: number) => void,
    resp3 = false,
    onReadonly?: () => void,
  ) {
    this.#onClose = onClose
    this.#onLatency = onLatency
    this.#onReadonly = onReadonly
    const options = { host: address.host, port: address.port }
    const socket =
      address.tls === undefined ? connectReading(options) : connectTls({ ...options, ...address.tls })
    this.#socket = socket
    // After the poll phase, not the current callback: the requests of every client read in this turn of the event
    // loop leave in one write to Redis.
    this.#requests = new JoinedWrites(socket, setImmediate)
    socket.setNoDelay(true)
    receiveReads(socket, this)
    socket.once('connect', () => {
      this.#connected = true
    })
    socket.on('error', (error) => this.#fail(error))
    socket.on('close', () => this.#fail(new Error('connection closed')))
    if (address.password !== undefined) {
      const auth =
        address.username === undefined
          ? ['AUTH', address.password]
          : ['AUTH', address.username, address.password]
      this.#send(encodeRequest(auth), new CheckedSink((message) => this.#refused('AUTH', message)))
    }
    if (address.db !== 0) {
      this.#send(
        encodeRequest(['SELECT', String(address.db)]),
        new CheckedSink((message) => this.#refused('SELECT', message)),
      )
    }
    // For RESP3 clients: Redis then answers with RESP3's types (maps, sets, doubles, nulls) on this connection.
    if (resp3) {
      this.#send(
        encodeRequest(['HELLO', '3']),
        new CheckedSink((message) => this.#refused('HELLO 3', message)),
      )
    }
  }

  /** Whether the connection can take requests (false once it failed or was closed). */
  get usable(): boolean {
    return !this.#closed
  }

  /** Whether the connection failed or the server closed it (not closed by the proxy). */
  get lost(): boolean {
    return this.#closed && !this.#closedByProxy
  }

  /** Requests sent whose replies have not arrived. */
  get inFlight(): number {
    return this.#waiting.length
  }

  /** Sends one request's bytes; its reply goes to `sink` (or its failure, when the connection is lost). */
  send(bytes: Buffer, sink: ReplySink): void {
    if (this.#closed) {
      sink.fail(this.#lostError())
      return
    }
    const onLatency = this.#onLatency
    this.#send(
      bytes,
      onLatency !== undefined && (++this.#sent & 31) === 0 ? new TimedSink(sink, onLatency) : sink,
    )
  }

  /**
   * From now on relays everything the server sends to `onData` unframed (a subscribed connection pushes messages
   * nobody asked for), once the replies already awaited have arrived.
   */
  tunnel(onData: (chunk: Buffer) => void): void {
    this.#tunnelTo = onData
  }

  /** Bytes written as they are, outside the reply queue (a tunnelled connection). */
  writeRaw(bytes: Buffer): void {
    if (this.#closed) return
    this.#requests.flush()
    this.#socket.write(bytes)
  }

  /** Closes the connection; requests still waiting fail. */
  close(): void {
    if (!this.#closed) this.#closedByProxy = true
    this.#fail(new Error('closed by the proxy'))
    this.#socket.destroy()
  }

  #send(bytes: Buffer, sink: ReplySink): void {
    this.#waiting.push(sink)
    this.#requests.write(bytes)
  }

  readonly #resume = (): void => {
    this.#socket.resume()
  }

  /** One chunk from Redis (ChunkReceiver). */
  receive(chunk: Buffer): void {
    let from = 0
    const waiting = this.#waiting
    while (from < chunk.length) {
      if (this.#tunnelTo !== undefined && waiting.length === 0) {
        this.#tunnelTo(from === 0 ? chunk : chunk.subarray(from))
        return
      }
      const sink = waiting.peekFront()
      if (sink === undefined) {
        // Bytes no request asked for: the stream can no longer be matched to requests.
        this.#fail(new Error('reply without a request'))
        this.#socket.destroy()
        return
      }
      let end: number
      try {
        end = this.#scanner.scan(chunk, from)
      } catch (error) {
        this.#fail(error as Error)
        this.#socket.destroy()
        return
      }
      // A demoted primary refuses writes: the reply goes to the client as Redis gave it, and the owner looks for
      // the new primary. One byte compared per reply; the rest only for errors.
      if (
        !this.#midReply &&
        chunk[from] === MINUS &&
        this.#onReadonly !== undefined &&
        isReadonly(chunk, from)
      ) {
        this.#onReadonly()
      }
      sink.data(end === -1 ? (from === 0 ? chunk : chunk.subarray(from)) : bufferView(chunk, from, end))
      this.#midReply = end === -1
      if (end === -1) {
        // A large reply to a slow reader: the replies behind it on this connection wait for it anyway.
        if (sink.backlogged?.(this.#resume) === true) this.#socket.pause()
        return
      }
      waiting.shift()
      sink.end()
      from = end
    }
  }

  #refused(step: string, message: string): void {
    this.#fail(new Error(`${step} refused by redis: ${message}`))
    this.#socket.destroy()
  }

  #fail(cause: Error): void {
    if (this.#closed) return
    this.#closed = true
    this.#failure = cause
    const error = this.#lostError()
    for (let sink = this.#waiting.shift(); sink !== undefined; sink = this.#waiting.shift()) sink.fail(error)
    this.#onClose(this)
  }

  #lostError(): BackendLostError {
    const Lost = this.#connected || this.#closedByProxy ? BackendLostError : BackendUnreachableError
    return new Lost(`ERR heatsink proxy: connection to redis lost (${this.#failure?.message ?? 'closed'})`, {
      cause: this.#failure,
    })
  }
}

const MINUS = 0x2d
const READONLY = Buffer.from('-READONLY ')

function isReadonly(chunk: Buffer, from: number): boolean {
  return (
    chunk.length - from >= READONLY.length &&
    chunk.compare(READONLY, 0, READONLY.length, from, from + READONLY.length) === 0
  )
}

// Times one request's round trip for the latency histogram.
class TimedSink implements ReplySink {
  readonly #inner: ReplySink
  readonly #onLatency: (seconds: number) => void
  readonly #start = performance.now()

  constructor(inner: ReplySink, onLatency: (seconds: number) => void) {
    this.#inner = inner
    this.#onLatency = onLatency
  }

  data(bytes: Buffer): void {
    this.#inner.data(bytes)
  }

  end(): void {
    this.#onLatency((performance.now() - this.#start) / 1000)
    this.#inner.end()
  }

  backlogged(resume: () => void): boolean {
    return this.#inner.backlogged?.(resume) === true
  }

  fail(error: Error): void {
    this.#inner.fail(error)
  }
}
