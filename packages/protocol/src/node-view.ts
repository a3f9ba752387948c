// What the aggregator's node view (GET /nodes, GET /nodes/{node}) sends to the dashboard and the CLI: the load of
// every Redis node Heatsink talks to, sampled from INFO by one aggregator replica, and the hot keys each one holds.
// Plain types, as in live-view.ts: nothing reads them back into Heatsink.

/** One command's latency percentiles on a node, in microseconds (INFO latencystats: since the node started). */
export interface CommandLatency {
  command: string
  calls: number
  p50Usec: number | null
  p99Usec: number | null
  p999Usec: number | null
}

/** A node's load in its latest sample; rates are over the time since the sample before (null on the first). */
export interface NodeFigures {
  /** Commands processed per second (total_commands_processed delta). */
  opsPerSecond: number | null
  /** CPU time (used_cpu_sys + used_cpu_user delta) over wall time: 1 is one core busy. */
  cpuRatio: number | null
  usedMemoryBytes: number
  /** 0: no limit. */
  maxmemoryBytes: number
  connectedClients: number
  blockedClients: number
  keyspaceHitsPerSecond: number | null
  keyspaceMissesPerSecond: number | null
  networkInBytesPerSecond: number | null
  networkOutBytesPerSecond: number | null
  /** Keys evicted since the node started, and per second in the latest sample. */
  evictedKeys: number
  evictedKeysPerSecond: number | null
  /** The busiest commands (by calls since the node started) with their latency percentiles. */
  latency: CommandLatency[]
  /** Replicas: seconds since the replica last acknowledged its master (the master's INFO); null on a master. */
  replicationLagSeconds: number | null
  /** Replicas: bytes of the master's replication stream not yet acknowledged; null on a master. */
  replicationBehindBytes: number | null
}

/** A hot (registered) or warming key on the node that owns it. */
export interface NodeHotKey {
  key: string
  /** registered: in the registry; warming: at half the hot threshold or more, not registered. */
  state: 'registered' | 'warming'
  mitigation: 'local_cache' | 'split' | 'coalesce' | 'replica_read' | null
  /** Cluster-wide requests per second as the agents count them (L1 hits included). */
  requestsPerSecond: number | null
  /** Of those, the ones that still reach Redis: L1 misses for local_cache keys; null for a split key. */
  redisOpsPerSecond: number | null
  /** redisOpsPerSecond over the node's ops/s, at most 1. */
  shareOfNodeOps: number | null
  /**
   * The node's highest ops/s from 10 s before the key's promotion to the first sample after it; null for warming
   * keys, or a key promoted before sampling began. A key mitigated within one sample interval of turning hot shows
   * only part of its load here.
   */
  nodeOpsBefore: number | null
  /** The node's ops/s now, for a registered key. */
  nodeOpsAfter: number | null
}

/** One node and its latest sample. */
export interface NodeStatus {
  /** host:port, as the topology names it. */
  node: string
  role: 'master' | 'replica'
  /** The master a replica follows; null on a master. */
  master: string | null
  /** Whether the latest INFO answered. */
  up: boolean
  /** Why the latest INFO failed; null when up. */
  error: string | null
  /** When the latest INFO answered, epoch ms; null when it never did since this replica began sampling. */
  sampledAt: number | null
  /** The latest figures, kept from the last answer while the node is down; null before any. */
  figures: NodeFigures | null
  /** The registered and warming keys this node owns (a Cluster slot's master; the primary otherwise). */
  hotKeys: NodeHotKey[]
}

/** Body of GET /nodes. */
export interface NodesView {
  /** standalone (one server), sentinel (a primary Sentinel follows), cluster. */
  topology: 'standalone' | 'sentinel' | 'cluster' | null
  /** When the latest sample was taken, epoch ms; null while none is kept (sampling off, or not started yet). */
  sampledAt: number | null
  intervalMs: number
  /** The busiest master's ops/s over the masters' mean; null with no figures yet. */
  imbalance: number | null
  nodes: NodeStatus[]
}

/** One point of a node's charts. */
export interface NodeHistoryPoint {
  at: number
  opsPerSecond: number | null
  cpuRatio: number | null
}

/** Body of GET /nodes/{node}: the node and its recent history (oldest first). */
export interface NodeDetail extends NodeStatus {
  history: NodeHistoryPoint[]
}
