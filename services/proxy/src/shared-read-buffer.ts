import { connect, Socket, type TcpNetConnectOpts } from 'node:net'

/** What a socket's bytes are handed to, one chunk at a time; the chunk is the receiver's to keep. */
export interface ChunkReceiver {
  receive(chunk: Buffer): void
}

const RECEIVER: unique symbol = Symbol('heatsink chunk receiver')
const SHARED_READS: unique symbol = Symbol('heatsink shared reads')
type ReadingSocket = Socket & { [RECEIVER]?: ChunkReceiver; [SHARED_READS]?: true; _handle?: object | null }

// Every socket of the process reads into this one buffer: reads run one at a time on the event loop's thread,
// and each is copied out before the next.
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024)

/**
 * Node's default read allocates a 64 KiB buffer per read, shrinks it to the bytes read and hands it to the
 * garbage collector as an external allocation. Reading into one shared buffer and copying the bytes out (for a
 * request, or a batch of small replies, a slice of Node's buffer pool) costs less. Measured through the proxy
 * with redis-benchmark (SET and GET, 50 clients, cold keys): 0.6 µs less user CPU per request, a tenth of what
 * the proxy spends in user space. The callback is shared: Node calls it with the socket as `this`, so an idle
 * connection holds no closure for it.
 */
const ONREAD = {
  buffer: READ_BUFFER,
  // True: keep reading (pausing is the socket's pause(), which Node honours for these sockets too).
  callback(this: ReadingSocket, bytes: number): boolean {
    const chunk = Buffer.allocUnsafe(bytes)
    READ_BUFFER.copy(chunk, 0, 0, bytes)
    this[RECEIVER]?.receive(chunk)
    return true
  },
}

/** A TCP connection that reads into the shared buffer. */
export function connectReading(options: TcpNetConnectOpts): Socket {
  const socket = connect({ ...options, onread: ONREAD }) as ReadingSocket
  socket[SHARED_READS] = true
  return socket
}

/**
 * The connection `accepted` (from a server made with `pauseOnConnect`, so nothing has been read from it) as a
 * socket that reads into the shared buffer. Node gives servers no `onread` option, so the connection's handle
 * moves to a socket made with one. Where a Node version keeps no handle there, `accepted` itself is returned.
 */
export function adoptReading(accepted: Socket): Socket {
  const handle = (accepted as ReadingSocket)._handle
  if (handle === undefined || handle === null) return accepted
  ;(accepted as ReadingSocket)._handle = null
  // Without its handle, destroying the accepted socket only retires the object.
  accepted.destroy()
  const socket = new Socket({
    handle,
    readable: true,
    writable: true,
    onread: ONREAD,
  } as never) as ReadingSocket
  socket[SHARED_READS] = true
  return socket
}

/** Hands every chunk `socket` reads to `receiver`: from the shared buffer, or from 'data' events (TLS). */
export function receiveReads(socket: Socket, receiver: ChunkReceiver): void {
  const reading = socket as ReadingSocket
  reading[RECEIVER] = receiver
  if (reading[SHARED_READS] === true) return
  socket.on('data', onData)
  // A paused accepted socket (pauseOnConnect) whose handle could not be moved.
  if (socket.isPaused()) socket.resume()
}

function onData(this: ReadingSocket, chunk: Buffer): void {
  this[RECEIVER]?.receive(chunk)
}
