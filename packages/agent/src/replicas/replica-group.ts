import type { Heartbeat } from './heartbeat.js'
import type { ReplicaNode } from './replica-node.js'

/** What a group needs to open and close replica connections. */
export interface ReplicaFactory {
  open(address: string): ReplicaNode
}

/**
 * One primary's replicas, with this agent's heartbeat on that primary. A replica takes reads while what it has
 * shown of the heartbeat is at most `maxLagMs` old; reads are spread over those replicas in turn.
 */
export class ReplicaGroup {
  readonly heartbeat: Heartbeat
  readonly #replicas = new Map<string, ReplicaNode>()
  // The same nodes as an array, for the turn (a read allocates nothing).
  #nodes: ReplicaNode[] = []
  readonly #factory: ReplicaFactory
  #turn = 0

  constructor(heartbeat: Heartbeat, factory: ReplicaFactory) {
    this.heartbeat = heartbeat
    this.#factory = factory
  }

  /** The replicas the primary has now (addresses as host:port); connections to others are closed. */
  setReplicas(addresses: readonly string[]): void {
    const wanted = new Set(addresses)
    for (const [address, node] of this.#replicas) {
      if (wanted.has(address)) continue
      this.#replicas.delete(address)
      void node.close()
    }
    for (const address of wanted) {
      if (!this.#replicas.has(address)) this.#replicas.set(address, this.#factory.open(address))
    }
    this.#nodes = [...this.#replicas.values()]
  }

  get size(): number {
    return this.#replicas.size
  }

  /** One heartbeat on the primary and one poll of it on every replica. */
  tick(): void {
    this.heartbeat.beat()
    const { key, parse } = this.heartbeat
    for (const node of this.#replicas.values()) node.poll(key, parse)
  }

  /**
   * The next replica to read from at `now`: one within the lag bound that has shown heartbeat `after` or a later
   * one (a write of this process answered before that heartbeat was sent is on it); undefined when none is.
   */
  pick(now: number, maxLagMs: number, after: number): ReplicaNode | undefined {
    const nodes = this.#nodes
    const count = nodes.length
    for (let i = 0; i < count; i++) {
      const node = nodes[(this.#turn + i) % count] as ReplicaNode
      const seen = node.seen
      if (now - seen.sentAt > maxLagMs || seen.sequence < after) continue
      this.#turn = (this.#turn + i + 1) % count
      return node
    }
    return undefined
  }

  /** Whether every replica has shown heartbeat `sequence`: a write answered before it is on all of them. */
  allHaveSeen(sequence: number): boolean {
    for (const node of this.#replicas.values()) if (node.seen.sequence < sequence) return false
    return true
  }

  close(): void {
    for (const node of this.#nodes) void node.close()
    this.#replicas.clear()
    this.#nodes = []
  }
}
