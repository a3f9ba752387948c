import type { Cluster } from 'ioredis'
import type { BackendAddress } from '../backend/backend-address.js'
import type { BackendConnection } from '../backend/backend-connection.js'
import { BackendPool } from '../backend/backend-pool.js'

/**
 * A Redis Cluster behind the proxy: a BackendPool per master, chosen by slot from the slot table the agent's
 * ioredis Cluster keeps (refreshed on its own schedule, on MOVED, and when asked after a redirect here).
 */
export class ClusterBackend {
  readonly #cluster: Cluster
  readonly #template: BackendAddress
  readonly #sharedConnections: number
  readonly #pools = new Map<string, BackendPool>()
  readonly #onLatency: ((seconds: number) => void) | undefined
  #refreshing = false
  #closed = false

  constructor(
    cluster: Cluster,
    template: BackendAddress,
    sharedConnections: number,
    onLatency?: (seconds: number) => void,
  ) {
    this.#cluster = cluster
    this.#onLatency = onLatency
    this.#template = template
    this.#sharedConnections = sharedConnections
  }

  /** The master serving `slot` ("host:port"); the seed address until the slot table is known. */
  nodeOf(slot: number): string {
    return this.#cluster.slots[slot]?.[0] ?? `${this.#template.host}:${this.#template.port}`
  }

  /** Every master ("host:port"), sorted: the order a SCAN over the whole Cluster walks them in. */
  masters(): string[] {
    const masters = new Set<string>()
    for (const owners of this.#cluster.slots) if (owners?.[0] !== undefined) masters.add(owners[0])
    if (masters.size === 0) masters.add(`${this.#template.host}:${this.#template.port}`)
    return [...masters].sort()
  }

  /** The pool of connections to `node` ("host:port"), opened on first use. */
  pool(node: string): BackendPool {
    let pool = this.#pools.get(node)
    if (pool === undefined) {
      const colon = node.lastIndexOf(':')
      const address = {
        ...this.#template,
        host: node.slice(0, colon),
        port: Number(node.slice(colon + 1)),
        db: 0,
      }
      pool = new BackendPool(address, this.#sharedConnections, this.#onLatency)
      this.#pools.set(node, pool)
    }
    return pool
  }

  /** Shared connection `index` to the master of `slot` (a RESP3 one when `resp3`). */
  shared(slot: number, index: number, resp3 = false): BackendConnection {
    return this.pool(this.nodeOf(slot)).shared(index, resp3)
  }

  /** A connection of one client's own to the master of `slot`. */
  dedicated(slot: number, onLost: () => void, resp3 = false): BackendConnection {
    return this.pool(this.nodeOf(slot)).dedicated(onLost, resp3)
  }

  /** A redirect said the slot table is stale: one refresh at a time. */
  refresh(): void {
    if (this.#refreshing) return
    this.#refreshing = true
    this.#cluster.refreshSlotsCache(() => {
      this.#refreshing = false
    })
  }

  /** Whether close() was called: nothing is sent any more. */
  get closed(): boolean {
    return this.#closed
  }

  get openConnections(): number {
    let total = 0
    for (const pool of this.#pools.values()) total += pool.openConnections
    return total
  }

  close(): void {
    this.#closed = true
    for (const pool of this.#pools.values()) pool.close()
    this.#pools.clear()
  }
}
