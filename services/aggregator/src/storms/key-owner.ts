import { redisClusterSlot } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'

/** host:port of the Redis that owns a key, or null when it cannot be told. */
export type KeyOwner = (key: string) => string | null

/**
 * The owner of a key as the aggregator's own connection sees it: on a Cluster the master its slot map names for
 * the key's slot; otherwise the server the connection reached (behind Sentinel, the primary it follows). This is
 * a plain lookup for naming a node in an event; the per-node view of load is not built here.
 */
export function connectionOwner(redis: Redis | Cluster): KeyOwner {
  if (redis.isCluster) {
    const cluster = redis as Cluster
    return (key) => cluster.slots[redisClusterSlot(key)]?.[0] ?? null
  }
  const single = redis as Redis
  return () => {
    // The socket's peer is the server actually reached (Sentinel gives no address in the options).
    const socket = (single as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream
    if (socket?.remoteAddress !== undefined && socket.remotePort !== undefined)
      return `${socket.remoteAddress}:${socket.remotePort}`
    const { host, port } = single.options
    return host === undefined || port === undefined ? null : `${host}:${port}`
  }
}

/** For an aggregator whose Redis is a control Redis apart from the application's: the owner is not known. */
export const unknownOwner: KeyOwner = () => null
