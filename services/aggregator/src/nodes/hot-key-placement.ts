import { type NodeHotKey, type NodeStatus, type RegistryEntry, redisClusterSlot } from '@heatsink/protocol'
import type { KeyStats } from '../traffic-reader.js'
import type { OpsBefore } from './node-store.js'
import { ownerOf, type Topology } from './node-topology.js'

/** What the sampler knows of the keys to place, this sample. */
export interface KeysToPlace {
  readonly registered: readonly RegistryEntry[]
  /** Each registered key's statistics in the latest complete window. */
  readonly stats: ReadonlyMap<string, KeyStats | undefined>
  /** Unregistered keys at half the hot threshold or more: key -> req/s. */
  readonly warming: ReadonlyMap<string, number>
  /** The kept "before" figures, by key. */
  readonly befores: ReadonlyMap<string, OpsBefore>
}

/** The keys on each node, and which "before" figures are new. */
export interface Placement {
  readonly byNode: Map<string, NodeHotKey[]>
  /** Keys promoted since their "before" was last worked out: the caller looks it up in the history. */
  readonly needBefore: ReadonlyArray<{ key: string; node: string; detectedAt: number }>
}

/**
 * Places each registered and warming key on the node that owns it (its slot's master on a Cluster, the primary
 * otherwise), with its share of that node's ops. Only Redis-bound requests count towards the share: a local_cache
 * key's L1 hits never reach the node; a split key's requests go to its copies on other slots, so its share is
 * not known.
 */
export function placeKeys(topology: Topology, nodes: readonly NodeStatus[], keys: KeysToPlace): Placement {
  const byNode = new Map<string, NodeHotKey[]>()
  const needBefore: Array<{ key: string; node: string; detectedAt: number }> = []
  const opsOf = new Map(
    nodes.map((node) => [node.node, node.up ? (node.figures?.opsPerSecond ?? null) : null]),
  )
  const add = (node: string, hot: Omit<NodeHotKey, 'shareOfNodeOps'>) => {
    const ops = opsOf.get(node) ?? null
    const share =
      hot.redisOpsPerSecond === null || ops === null || ops <= 0 ? null : hot.redisOpsPerSecond / ops
    const list = byNode.get(node) ?? []
    list.push({ ...hot, shareOfNodeOps: share === null ? null : Math.min(1, share) })
    byNode.set(node, list)
  }

  for (const entry of keys.registered) {
    const node = ownerOf(topology, redisClusterSlot(entry.key))
    if (node === undefined) continue
    const stats = keys.stats.get(entry.key)
    const before = keys.befores.get(entry.key)
    const known = before !== undefined && before.node === node && before.detectedAt === entry.detectedAt
    if (!known) needBefore.push({ key: entry.key, node, detectedAt: entry.detectedAt })
    add(node, {
      key: entry.key,
      state: 'registered',
      mitigation: entry.mitigation,
      requestsPerSecond: stats?.requestsPerSecond ?? null,
      redisOpsPerSecond: redisBound(entry, stats),
      nodeOpsBefore: known ? before.opsPerSecond : null,
      nodeOpsAfter: opsOf.get(node) ?? null,
    })
  }
  for (const [key, rate] of keys.warming) {
    const node = ownerOf(topology, redisClusterSlot(key))
    if (node === undefined) continue
    add(node, {
      key,
      state: 'warming',
      mitigation: null,
      requestsPerSecond: rate,
      redisOpsPerSecond: rate,
      nodeOpsBefore: null,
      nodeOpsAfter: null,
    })
  }
  for (const list of byNode.values())
    list.sort((a, b) => (b.requestsPerSecond ?? 0) - (a.requestsPerSecond ?? 0))
  return { byNode, needBefore }
}

// Requests of a registered key that still reach its node.
function redisBound(entry: RegistryEntry, stats: KeyStats | undefined): number | null {
  if (stats === undefined || entry.mitigation === 'split') return null
  const hitRatio = entry.mitigation === 'local_cache' ? (stats.localCacheHitRatio ?? 0) : 0
  return stats.requestsPerSecond * (1 - hitRatio)
}

/** The busiest master's ops/s over the mean of the masters that answered; null without figures. */
export function imbalanceOf(nodes: readonly NodeStatus[]): number | null {
  const ops = nodes
    .filter((node) => node.role === 'master' && node.up)
    .map((node) => node.figures?.opsPerSecond)
    .filter((value): value is number => typeof value === 'number')
  if (ops.length === 0) return null
  const mean = ops.reduce((sum, value) => sum + value, 0) / ops.length
  return mean > 0 ? Math.max(...ops) / mean : null
}
