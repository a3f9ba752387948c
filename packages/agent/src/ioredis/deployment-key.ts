import type { ClusterNode, RedisOptions } from 'ioredis'
import { usesSentinel } from '../connections/sentinel-options.js'

/**
 * What one Redis deployment is to a process, for sharing one agent (and one L1) between its clients. A
 * Sentinel-managed primary is its sentinels and master name, not an address: two masters monitored by the same
 * sentinels, or the same master before and after a failover, are told apart by name. Two spellings of one
 * deployment (another host name, another seed list) only cost a second agent; two deployments must never meet
 * under one key, so every part that picks the data is in it.
 */
export function redisDeployment(options: RedisOptions): string {
  const tail = `${options.db ?? 0}/${options.username ?? ''}`
  if (usesSentinel(options)) {
    const sentinels = (options.sentinels ?? []).map(
      (sentinel) => `${sentinel.host ?? 'localhost'}:${sentinel.port ?? 26379}`,
    )
    // A replica-role client's agent fills L1 from a replica (followReads): not the same L1 as a primary reader's.
    const reads = options.role === 'slave' ? '/replica' : ''
    return `sentinel:${[...new Set(sentinels)].sort().join(',')}/${options.name ?? ''}${reads}/${tail}`
  }
  const where = options.path ?? `${options.host ?? 'localhost'}:${options.port ?? 6379}`
  return `${where}/${tail}`
}

/**
 * A Cluster by its seed nodes: every seed belongs to exactly one cluster, so one seed list never names two.
 * The same cluster given other seeds gets an agent of its own.
 */
export function clusterDeployment(startupNodes: readonly ClusterNode[]): string {
  const nodes = startupNodes.map((node) =>
    typeof node === 'object' ? `${node.host ?? 'localhost'}:${node.port ?? 6379}` : String(node),
  )
  return `cluster:${nodes.sort().join(',')}`
}
