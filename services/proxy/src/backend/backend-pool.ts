import type { BackendAddress } from './backend-address.js'
import { BackendConnection } from './backend-connection.js'

/**
 * The backend connections: a few shared ones that many clients' requests are multiplexed onto (a client stays on
 * one, so its requests keep their order), and dedicated ones for clients whose connection carries state Redis
 * keeps per connection (MULTI, WATCH, SELECT, blocking commands, subscriptions). A shared connection that failed is
 * replaced on its next use, so an outage costs the requests in flight and recovers by itself.
 */
export class BackendPool {
  readonly #address: BackendAddress
  readonly #shared: Array<BackendConnection | undefined>
  readonly #dedicated = new Set<BackendConnection>()
  readonly #onLatency: ((seconds: number) => void) | undefined
  #closed = false

  constructor(address: BackendAddress, sharedConnections: number, onLatency?: (seconds: number) => void) {
    this.#address = address
    this.#onLatency = onLatency
    this.#shared = new Array(sharedConnections).fill(undefined)
  }

  /** How many shared connections there are; a client picks one by its id. */
  get sharedCount(): number {
    return this.#shared.length
  }

  /** Shared connection `index`, opened or reopened when needed. */
  shared(index: number): BackendConnection {
    const current = this.#shared[index]
    if (current?.usable) return current
    const connection = new BackendConnection(
      this.#address,
      (closed) => {
        if (this.#shared[index] === closed) this.#shared[index] = undefined
      },
      this.#onLatency,
    )
    this.#shared[index] = connection
    return connection
  }

  /** A new connection for one client alone; the client closes it. `onLost` when it closes or fails. */
  dedicated(onLost: () => void): BackendConnection {
    const connection = new BackendConnection(
      this.#address,
      (closed) => {
        this.#dedicated.delete(closed)
        onLost()
      },
      this.#onLatency,
    )
    this.#dedicated.add(connection)
    return connection
  }

  /** Open connections: shared and dedicated. */
  get openConnections(): number {
    return this.#shared.filter((connection) => connection?.usable).length + this.#dedicated.size
  }

  /** Requests in flight on the shared connections. */
  get inFlight(): number {
    let total = 0
    for (const connection of this.#shared) total += connection?.inFlight ?? 0
    return total
  }

  close(): void {
    if (this.#closed) return
    this.#closed = true
    for (const connection of this.#shared) connection?.close()
    for (const connection of this.#dedicated) connection.close()
    this.#dedicated.clear()
  }
}
