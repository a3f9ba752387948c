/**
 * The counter shard of a key: FNV-1a over its UTF-16 code units, modulo the shard count. Counters for one window
 * are split over shards so that, on a Redis Cluster, a window's counting spreads over the masters instead of
 * making one hash (and one node) the hottest key in the system.
 */
export function counterShard(key: string, shards: number): number {
  if (shards === 1) return 0
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193)
  return (hash >>> 0) % shards
}
