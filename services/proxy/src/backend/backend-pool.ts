import type { BackendAddress } from './backend-address.js'
import { BackendConnection } from './backend-connection.js'
import { HeldRequests } from './held-requests.js'
import type { ReplySink } from './reply-sink.js'

/**
 * The backend connections: a few shared ones that many clients' requests are multiplexed onto (a client stays on
 * one, so its requests keep their order), and dedicated ones for clients whose connection carries state Redis
 * keeps per connection (MULTI, WATCH, SELECT, blocking commands, subscriptions). A shared connection that failed is
 * replaced on its next use, so an outage costs the requests in flight and recovers by itself.
 */
export class BackendPool {
  #address: BackendAddress
  readonly #shared: Array<BackendConnection | undefined>
  // The same for RESP3 clients (HELLO 3 sent first), opened only when such a client comes.
  readonly #shared3: Array<BackendConnection | undefined>
  readonly #dedicated = new Set<BackendConnection>()
  readonly #onLatency: ((seconds: number) => void) | undefined
  readonly #onTrouble: (() => void) | undefined
  readonly #held = new HeldRequests()
  #isHeld: () => boolean = () => false
  #closed = false

  /** `onTrouble`: a connection was lost or Redis answered READONLY (a primary that may have been replaced). */
  constructor(
    address: BackendAddress,
    sharedConnections: number,
    onLatency?: (seconds: number) => void,
    onTrouble?: () => void,
  ) {
    this.#address = address
    this.#onLatency = onLatency
    this.#onTrouble = onTrouble
    this.#shared = new Array(sharedConnections).fill(undefined)
    this.#shared3 = new Array(sharedConnections).fill(undefined)
  }

  /** How many shared connections there are; a client picks one by its id. */
  get sharedCount(): number {
    return this.#shared.length
  }

  /**
   * Holds requests for shared connections while `isHeld()` (a Sentinel backend has no primary that answers), until
   * release() (see HeldRequests).
   */
  holdWhile(isHeld: () => boolean): void {
    this.#isHeld = isHeld
  }

  /** A primary answers again: the requests held go out, in order, before any later one. */
  release(): void {
    this.#held.release()
  }

  /** Sends a request on shared connection `index`, or holds it while no primary answers. */
  send(index: number, resp3: boolean, bytes: Buffer, sink: ReplySink): void {
    if (!this.#closed && (this.#held.size > 0 || this.#isHeld())) {
      this.#held.hold(sink, () => this.shared(index, resp3).send(bytes, sink))
      return
    }
    this.shared(index, resp3).send(bytes, sink)
  }

  /** Shared connection `index` (of the RESP3 ones when `resp3`), opened or reopened when needed. */
  shared(index: number, resp3 = false): BackendConnection {
    const shared = resp3 ? this.#shared3 : this.#shared
    const current = shared[index]
    if (current?.usable) return current
    const connection = new BackendConnection(
      this.#address,
      (closed) => {
        if (shared[index] === closed) shared[index] = undefined
        if (closed.lost) this.#onTrouble?.()
      },
      this.#onLatency,
      resp3,
      this.#onTrouble,
    )
    shared[index] = connection
    return connection
  }

  /** A new connection for one client alone; the client closes it. `onLost` when it closes or fails. */
  dedicated(onLost: () => void, resp3 = false): BackendConnection {
    const connection = new BackendConnection(
      this.#address,
      (closed) => {
        this.#dedicated.delete(closed)
        if (closed.lost) this.#onTrouble?.()
        onLost()
      },
      this.#onLatency,
      resp3,
      this.#onTrouble,
    )
    this.#dedicated.add(connection)
    return connection
  }

  /** Open connections: shared and dedicated. */
  get openConnections(): number {
    const usable = (connection: BackendConnection | undefined) => connection?.usable === true
    return this.#shared.filter(usable).length + this.#shared3.filter(usable).length + this.#dedicated.size
  }

  /** Requests in flight on the shared connections. */
  get inFlight(): number {
    let total = 0
    for (const connection of this.#shared) total += connection?.inFlight ?? 0
    for (const connection of this.#shared3) total += connection?.inFlight ?? 0
    return total
  }

  /**
   * Points the pool at a new primary: every connection to the old one is closed, as Sentinel's own reconfiguration
   * (CLIENT KILL TYPE normal) would. Requests in flight there fail with a connection error; clients whose
   * connection carried state (dedicated) are disconnected and reconnect; later requests go to `address`.
   */
  moveTo(address: BackendAddress): void {
    this.#address = address
    this.#closeAll()
  }

  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#held.failAll(new Error('ERR heatsink proxy: closing'))
    this.#closeAll()
  }

  #closeAll(): void {
    for (const connection of this.#shared) connection?.close()
    for (const connection of this.#shared3) connection?.close()
    for (const connection of [...this.#dedicated]) connection.close()
    this.#dedicated.clear()
  }
}
