import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy in front of a real server that a test can break: `cut()` drops every connection and refuses new
 * ones (a server that went down), `stall()` keeps sockets open but passes no bytes (a network partition),
 * `restore()` forwards again on the same port. The bytes are the real server's; only the path is broken.
 */
export class ChaosProxy {
  readonly #targetHost: string
  readonly #targetPort: number
  readonly #sockets = new Set<Socket>()
  #server: Server | undefined
  #port = 0
  #stalled = false

  constructor(target: { host: string; port: number }) {
    this.#targetHost = target.host
    this.#targetPort = target.port
  }

  /** The port clients connect to; fixed across cut() and restore(). */
  get port(): number {
    return this.#port
  }

  /** Starts listening on a free loopback port. */
  async start(): Promise<void> {
    await this.#listen(0)
  }

  /** Destroys every proxied connection and stops listening, so connecting is refused. */
  async cut(): Promise<void> {
    const server = this.#server
    this.#server = undefined
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  /** Keeps every connection open, old and new, but forwards nothing either way. */
  stall(): void {
    this.#stalled = true
  }

  /** Forwards again: listens on the same port if cut, passes bytes if stalled. */
  async restore(): Promise<void> {
    this.#stalled = false
    if (this.#server === undefined) await this.#listen(this.#port)
  }

  /** Stops for good. */
  async close(): Promise<void> {
    await this.cut()
  }

  async #listen(port: number): Promise<void> {
    const server = createServer((client) => this.#accept(client))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen({ port, host: '127.0.0.1' }, () => resolve())
    })
    const address = server.address()
    if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address')
    this.#port = address.port
    this.#server = server
  }

  #accept(client: Socket): void {
    const upstream = connect(this.#targetPort, this.#targetHost)
    this.#sockets.add(client)
    this.#sockets.add(upstream)
    const forward = (from: Socket, to: Socket) => {
      // Data arriving while stalled is dropped: a partition loses packets, it does not queue them.
      from.on('data', (chunk) => {
        if (!this.#stalled) to.write(chunk)
      })
      from.on('close', () => {
        this.#sockets.delete(from)
        to.destroy()
      })
      from.on('error', () => to.destroy())
    }
    forward(client, upstream)
    forward(upstream, client)
  }
}
