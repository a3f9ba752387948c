import type { Cluster, Redis } from 'ioredis'
import type { SplitLayout, SplitShard } from './layout.js'

/** Which Redis node serves a shard. */
export interface ShardPlacement {
  readonly shard: SplitShard
  /** `host:port` of the master serving the shard's slot on a Cluster; 'standalone' otherwise; 'unknown' before
   * the cluster's slot map has loaded. */
  readonly node: string
}

/** Where each shard of a layout lives now, from the client's slot map (no round trip). For statistics and tests. */
export function shardPlacement(redis: Redis | Cluster, layout: SplitLayout): ShardPlacement[] {
  const slots = 'isCluster' in redis && redis.isCluster ? (redis as Cluster).slots : undefined
  return layout.shards.map((shard) => ({
    shard,
    node: slots === undefined ? 'standalone' : (slots[shard.slot]?.[0] ?? 'unknown'),
  }))
}
