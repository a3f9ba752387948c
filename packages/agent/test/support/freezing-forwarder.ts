import { connect, type Server, type Socket } from 'node:net'
import { listenOnLoopback } from '@heatsink/test'

/**
 * A TCP forwarder in front of a real Redis that can stall chosen connections without closing them, as a network
 * partition or a half-open socket does: `freeze(marker)` holds what the server sends to every connection whose
 * client has sent `marker` (a connection name, say), `thaw()` delivers what was held and forwards again.
 */
export class FreezingForwarder {
  readonly #target: { host: string; port: number }
  readonly #links = new Set<Link>()
  #server: Server | undefined
  #marker: string | undefined

  constructor(target: { host: string; port: number }) {
    this.#target = target
  }

  /** Listens on a free loopback port; resolves with it. */
  async start(): Promise<number> {
    const { server, port } = await listenOnLoopback((client) => this.#accept(client))
    this.#server = server
    return port
  }

  /** From now on, the server's bytes to connections whose client sent `marker` are held. */
  freeze(marker: string): void {
    this.#marker = marker
  }

  /** Connections frozen now. */
  get frozen(): number {
    return [...this.#links].filter((link) => this.#holds(link)).length
  }

  /** Delivers everything held, and stops holding. */
  thaw(): void {
    this.#marker = undefined
    for (const link of this.#links) {
      for (const chunk of link.held.splice(0)) link.client.write(chunk)
    }
  }

  async close(): Promise<void> {
    for (const link of this.#links) {
      link.client.destroy()
      link.upstream.destroy()
    }
    this.#links.clear()
    const server = this.#server
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  #holds(link: Link): boolean {
    return this.#marker !== undefined && link.sent.includes(this.#marker)
  }

  #accept(client: Socket): void {
    const upstream = connect(this.#target.port, this.#target.host)
    const link: Link = { client, upstream, sent: '', held: [] }
    this.#links.add(link)
    client.on('data', (chunk: Buffer) => {
      // Markers come first on a connection (CLIENT SETNAME): the first KiB is enough to look in.
      if (link.sent.length < 1024) link.sent += chunk.toString('latin1')
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (this.#holds(link)) link.held.push(chunk)
      else client.write(chunk)
    })
    const end = () => {
      this.#links.delete(link)
      client.destroy()
      upstream.destroy()
    }
    for (const socket of [client, upstream]) {
      socket.on('close', end)
      socket.on('error', end)
    }
  }
}

interface Link {
  readonly client: Socket
  readonly upstream: Socket
  /** The start of what the client sent. */
  sent: string
  readonly held: Buffer[]
}
