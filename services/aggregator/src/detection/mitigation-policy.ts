import { splitKindOf } from '@heatsink/commands'
import type { Mitigation } from '@heatsink/protocol'

/** What the reports say about a key's traffic in one window, cluster-wide. */
export interface TrafficShape {
  count: number
  writes: number
  misses: number
  windowMs: number
  /**
   * The command forms reported on the key over the recent windows (CommandForm bits, OR-ed); read only for a
   * write-hot key, the one case where they decide anything.
   */
  forms?: number
}

export interface MitigationPolicyOptions {
  /** Writes at or above this share of requests make a key write-hot: split it. */
  writeShare: number
  /** Misses at or above this share make a key miss-hot: coalesce its loads. */
  missShare: number
  /** Writes per second one Redis node absorbs comfortably; a split key gets one shard per this much. */
  splitWriteCapacity: number
  /** Most shards an automatic split may use. */
  maxSplitFactor: number
  /**
   * Writes at or above this share (and below writeShare) make a read-hot key change too often for L1: each write
   * empties every agent's copy, so reads go to its primary's replicas instead (replica_read). Null: replica_read
   * is never chosen automatically, for only the operator knows that the agents' Redis has replicas.
   */
  replicaReadShare: number | null
}

export const DEFAULT_MITIGATION_POLICY: MitigationPolicyOptions = {
  writeShare: 0.3,
  missShare: 0.1,
  splitWriteCapacity: 10_000,
  maxSplitFactor: 64,
  replicaReadShare: null,
}

/** A mitigation the policy chose. */
export interface MitigationChoice {
  mitigation: Mitigation
  splitFactor: number
}

/** Whether writes are a large enough share of the key's requests that only a split would relieve it. */
export function isWriteHot(shape: TrafficShape, options: MitigationPolicyOptions): boolean {
  return shape.writes / Math.max(1, shape.count) >= options.writeShare
}

/**
 * Picks a key's mitigation from its traffic: writes dominate -> split (a local cache cannot absorb writes), but
 * only when every command form seen on the key is one split kind's (a counter by the INCR family and GET, a set
 * by SADD/SREM and its reads, a sorted set by ZADD pairs and rank reads, a plain value by GET and SET); a
 * write-hot key with other forms gets nothing (undefined): no other mitigation relieves writes, and a registered
 * key costs an invalidation broadcast per write. Misses dominate -> coalesce (the herd is on the loader, not on
 * Redis). A read-hot key written often enough that L1 would keep being emptied (replicaReadShare, when the
 * operator set it because the agents' Redis has replicas) -> replica_read; otherwise local_cache, the cheapest
 * defense for read-mostly keys. Writes are checked first because a write-hot key also misses after each write.
 */
export function chooseMitigation(
  shape: TrafficShape,
  options: MitigationPolicyOptions = DEFAULT_MITIGATION_POLICY,
): MitigationChoice | undefined {
  if (isWriteHot(shape, options)) {
    if (splitKindOf(shape.forms ?? 0) === undefined) return undefined
    return { mitigation: 'split', splitFactor: splitFactorFor(shape, options) }
  }
  if (shape.misses / Math.max(1, shape.count) >= options.missShare) {
    return { mitigation: 'coalesce', splitFactor: 1 }
  }
  const replicaReadShare = options.replicaReadShare ?? null
  if (replicaReadShare !== null && shape.writes / Math.max(1, shape.count) >= replicaReadShare) {
    return { mitigation: 'replica_read', splitFactor: 1 }
  }
  return { mitigation: 'local_cache', splitFactor: 1 }
}

/**
 * The write rate over per-node capacity, rounded up to a power of two (so a shard is picked by masking a hash), at
 * least 2 (a split factor of 1 relieves nothing), capped.
 */
export function splitFactorFor(shape: TrafficShape, options: MitigationPolicyOptions): number {
  const writesPerSecond = (shape.writes * 1000) / shape.windowMs
  const needed = Math.max(2, Math.ceil(writesPerSecond / options.splitWriteCapacity))
  let factor = 1
  while (factor < needed) factor *= 2
  return Math.min(factor, options.maxSplitFactor)
}
