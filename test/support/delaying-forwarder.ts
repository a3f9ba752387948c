import { connect, type Server, type Socket } from 'node:net'
import { listenOnLoopback } from './loopback-server.js'

/**
 * A TCP forwarder in front of a real Redis that delivers every reply `delayMs` late, in order: each round trip
 * then costs at least that long, whatever else the machine is doing, so a test can tell one round trip per
 * command apart from one round trip for many, with a margin no load on a shared machine closes.
 */
export class DelayingForwarder {
  readonly #target: { host: string; port: number }
  readonly #delayMs: number
  readonly #sockets = new Set<Socket>()
  #server: Server | undefined

  constructor(target: { host: string; port: number }, delayMs: number) {
    this.#target = target
    this.#delayMs = delayMs
  }

  /** Listens on a free loopback port; resolves with it. */
  async start(): Promise<number> {
    const { server, port } = await listenOnLoopback((client) => this.#accept(client))
    this.#server = server
    return port
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
    const server = this.#server
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  #accept(client: Socket): void {
    const upstream = connect(this.#target.port, this.#target.host)
    this.#sockets.add(client).add(upstream)
    client.on('data', (chunk: Buffer) => upstream.write(chunk))
    // Timers of equal delay fire in the order they were set: replies keep their order.
    upstream.on('data', (chunk: Buffer) => {
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk)
      }, this.#delayMs)
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
      this.#sockets.delete(client)
      this.#sockets.delete(upstream)
    }
    for (const socket of [client, upstream]) {
      socket.on('close', end)
      socket.on('error', end)
    }
  }
}
