import { redisClusterSlot, slotTag } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Heartbeat } from './heartbeat.js'
import type { ReplicaAddresses } from './replica-addresses.js'
import { type ReplicaFactory, ReplicaGroup } from './replica-group.js'

/** Builds the heartbeat of one primary: `tag` places its key on that primary's slots (Cluster). */
export type HeartbeatFor = (tag: string, send: Redis | Cluster) => Heartbeat

/** Where a key's replicas are: one group per primary, learnt and refreshed by the topology. */
export interface ReplicaTopology {
  /** The group of the primary that holds `name`; undefined while it is not known. */
  groupFor(name: string): ReplicaGroup | undefined
  groups(): Iterable<ReplicaGroup>
  /** Learns the replicas again (a failover, a replica added or gone). */
  refresh(): Promise<void>
  close(): void
}

/** A standalone primary (behind Sentinel or not): one group, its replicas from `addresses`. */
export class StandaloneReplicas implements ReplicaTopology {
  readonly #group: ReplicaGroup
  readonly #addresses: ReplicaAddresses

  constructor(primary: Redis, addresses: ReplicaAddresses, heartbeat: HeartbeatFor, factory: ReplicaFactory) {
    this.#group = new ReplicaGroup(heartbeat('0', primary), factory)
    this.#addresses = addresses
  }

  groupFor(): ReplicaGroup {
    return this.#group
  }

  groups(): Iterable<ReplicaGroup> {
    return [this.#group]
  }

  async refresh(): Promise<void> {
    // Unanswered: the replicas known stay; each keeps reads only while its lag is within the bound.
    const addresses = await this.#addresses.list().catch(() => undefined)
    if (addresses !== undefined) this.#group.setReplicas(addresses)
  }

  close(): void {
    this.#addresses.close()
    this.#group.close()
  }
}

/**
 * A Redis Cluster: a group per master, made when one of its keys is first read, with the heartbeat on one of its
 * slots and the replicas ioredis's slot table lists for that slot (connected with READONLY). A group whose slot
 * moved to another master is dropped, and made again for the new one.
 */
export class ClusterReplicas implements ReplicaTopology {
  readonly #cluster: Cluster
  readonly #heartbeat: HeartbeatFor
  readonly #factory: ReplicaFactory
  // By master address; with the slot its heartbeat is on.
  readonly #groups = new Map<string, { group: ReplicaGroup; slot: number }>()

  constructor(cluster: Cluster, heartbeat: HeartbeatFor, factory: ReplicaFactory) {
    this.#cluster = cluster
    this.#heartbeat = heartbeat
    this.#factory = factory
  }

  groupFor(name: string): ReplicaGroup | undefined {
    const slot = redisClusterSlot(name)
    const master = this.#cluster.slots[slot]?.[0]
    if (master === undefined) return undefined
    const known = this.#groups.get(master)
    if (known !== undefined) return known.group
    const group = new ReplicaGroup(this.#heartbeat(slotTag(slot), this.#cluster), this.#factory)
    group.setReplicas(this.#cluster.slots[slot]?.slice(1) ?? [])
    this.#groups.set(master, { group, slot })
    return group
  }

  groups(): Iterable<ReplicaGroup> {
    return [...this.#groups.values()].map((known) => known.group)
  }

  async refresh(): Promise<void> {
    for (const [master, { group, slot }] of this.#groups) {
      const nodes = this.#cluster.slots[slot]
      if (nodes?.[0] !== master) {
        this.#groups.delete(master)
        group.close()
        continue
      }
      group.setReplicas(nodes.slice(1))
    }
    // ioredis relearns the slot table only on a redirection (or with slotsRefreshInterval, unset by default), and the
    // table a MOVED after a failover fetches may not show yet the old master as a replica (gossip still spreading):
    // while some key is replica_read, the table is asked for again each round, one CLUSTER SLOTS a second.
    if (this.#groups.size > 0) this.#cluster.refreshSlotsCache()
  }

  close(): void {
    for (const { group } of this.#groups.values()) group.close()
    this.#groups.clear()
  }
}
