import { randomBytes } from 'node:crypto'
import type { HeatsinkNames } from '@heatsink/protocol'
import type { Clock } from '@heatsink/sketch'
import type { Cluster, Redis, RedisOptions } from 'ioredis'
import { isClusterClient } from '../connections/client-shape.js'
import type { OwnedConnections } from '../connections/connections.js'
import type { AgentCounters } from '../events/stats.js'
import { Heartbeat } from './heartbeat.js'
import { InfoReplicaAddresses, SentinelReplicaAddresses } from './replica-addresses.js'
import type { ReplicaFactory } from './replica-group.js'
import { ReplicaNode } from './replica-node.js'
import { ClusterReplicas, type ReplicaTopology, StandaloneReplicas } from './replica-topology.js'

/** Heartbeat and poll period: a healthy replica shows a heartbeat at most about twice this old. */
export const HEARTBEAT_MS = 100
/** How often the replicas of each primary are learnt again (Sentinel, INFO replication, the slot table). */
const REFRESH_MS = 1000
/** A replica read not answered by then goes to the primary (and the replica takes no reads until it answers). */
const MAX_READ_DEADLINE_MS = 200

/** What ReplicaReads needs. */
export interface ReplicaReadsOptions {
  data: Redis | Cluster
  names: HeatsinkNames
  agentId: string
  maxLagMs: number
  clock: Clock
  connections: OwnedConnections
  counters: AgentCounters
}

/**
 * replica_read for the data-plane core: a read of such a key goes to one of its primary's replicas, in turn,
 * among those whose replication lag is within maxLagMs (see Heartbeat); none such (no replicas, all lagging or
 * down, the key written by this process and not yet on them) and it goes to the primary. Heartbeats, polls and
 * replica connections run only while some key is replica_read.
 */
export class ReplicaReads {
  readonly #options: ReplicaReadsOptions
  readonly #token = randomBytes(6).toString('hex')
  // Keys this process wrote, with the first heartbeat sent after the write was answered.
  readonly #pending = new Map<string, number>()
  readonly #deadlineMs: number
  #topology: ReplicaTopology | undefined
  #keys = 0
  #ticker: NodeJS.Timeout | undefined
  #refresher: NodeJS.Timeout | undefined

  constructor(options: ReplicaReadsOptions) {
    this.#options = options
    this.#deadlineMs = Math.min(MAX_READ_DEADLINE_MS, options.maxLagMs)
  }

  /** A key became replica_read: the first one starts heartbeats and replica connections. */
  enter(): void {
    if (this.#keys++ === 0) this.#start()
  }

  /** A key left replica_read: after the last one, nothing of replica_read stays open. */
  leave(name: string): void {
    this.#pending.delete(name)
    if (--this.#keys === 0) this.#stop()
  }

  /**
   * The reply of the read on a replica (the parser's form, as a fill's), or undefined when it must go to the
   * primary. The promise rejects when the replica failed or was too slow: the caller then asks the primary.
   */
  read(name: string, command: string, args: readonly unknown[]): Promise<unknown> | undefined {
    const group = this.#topology?.groupFor(name)
    if (group === undefined) return undefined
    const after = this.#pending.get(name) ?? 0
    const node = group.pick(this.#options.clock.now(), this.#options.maxLagMs, after)
    if (node === undefined) return undefined
    if (this.#pending.has(name) && group.allHaveSeen(after)) this.#pending.delete(name)
    this.#options.counters.replicaReads++
    return node.read(command, args, this.#deadlineMs)
  }

  /**
   * This process's write to replica_read key `name` was answered: until a later heartbeat shows on a replica, the
   * key is not read there.
   */
  wrote(name: string): void {
    const group = this.#topology?.groupFor(name)
    if (group !== undefined) this.#pending.set(name, group.heartbeat.nextSequence)
  }

  close(): void {
    this.#stop()
  }

  #start(): void {
    const { data, connections, agentId } = this.#options
    const factory: ReplicaFactory = {
      open: (address) => new ReplicaNode(address, this.#replicaOptions(), agentId, connections),
    }
    // Each heartbeat its own token: a group made again for a slot's new master (a Cluster failover) writes the same
    // key with its sequence from 0, and the replicas still hold the old group's higher one, which must not count.
    let made = 0
    const heartbeat = (tag: string, on: Redis | Cluster) =>
      new Heartbeat(
        this.#options.names.heartbeatKey(agentId, tag),
        `${this.#token}.${made++}`,
        (key, value, ttlMs) => on.set(key, value, 'PX', ttlMs),
        () => this.#options.clock.now(),
      )
    if (isClusterClient(data)) {
      this.#topology = new ClusterReplicas(data, heartbeat, factory)
    } else {
      const addresses = data.options.sentinels?.length
        ? new SentinelReplicaAddresses(data.options, agentId, connections)
        : new InfoReplicaAddresses(data)
      this.#topology = new StandaloneReplicas(data, addresses, heartbeat, factory)
    }
    const topology = this.#topology
    void topology.refresh()
    this.#ticker = setInterval(() => {
      for (const group of topology.groups()) group.tick()
    }, HEARTBEAT_MS)
    this.#refresher = setInterval(() => void topology.refresh(), REFRESH_MS)
    this.#ticker.unref()
    this.#refresher.unref()
  }

  #stop(): void {
    clearInterval(this.#ticker)
    clearInterval(this.#refresher)
    this.#topology?.close()
    this.#topology = undefined
    this.#pending.clear()
  }

  // The data client's credentials, TLS and database, without what would make a replica connection anything but
  // one plain connection (Sentinel, a Cluster's own options).
  #replicaOptions(): Partial<RedisOptions> {
    const data = this.#options.data
    const source: RedisOptions = isClusterClient(data) ? (data.options.redisOptions ?? {}) : data.options
    return {
      username: source.username,
      password: source.password,
      tls: source.tls,
      db: source.db,
      family: source.family,
      connectTimeout: source.connectTimeout,
      readOnly: isClusterClient(data),
    }
  }
}
