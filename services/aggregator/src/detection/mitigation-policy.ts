import type { Mitigation } from '@heatsink/protocol'

/** What the reports say about a key's traffic in one window, cluster-wide. */
export interface TrafficShape {
  count: number
  writes: number
  misses: number
  windowMs: number
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
}

export const DEFAULT_MITIGATION_POLICY: MitigationPolicyOptions = {
  writeShare: 0.3,
  missShare: 0.1,
  splitWriteCapacity: 10_000,
  maxSplitFactor: 64,
}

/**
 * Picks a key's mitigation from its traffic: writes dominate -> split (a local cache cannot absorb writes);
 * misses dominate -> coalesce (the herd is on the loader, not on Redis); otherwise local_cache, the cheapest
 * defense for read-mostly keys. Writes are checked first because a write-hot key also misses after each write.
 */
export function chooseMitigation(
  shape: TrafficShape,
  options: MitigationPolicyOptions = DEFAULT_MITIGATION_POLICY,
): { mitigation: Mitigation; splitFactor: number } {
  const count = Math.max(1, shape.count)
  if (shape.writes / count >= options.writeShare) {
    return { mitigation: 'split', splitFactor: splitFactorFor(shape, options) }
  }
  if (shape.misses / count >= options.missShare) return { mitigation: 'coalesce', splitFactor: 1 }
  return { mitigation: 'local_cache', splitFactor: 1 }
}

/** The write rate over per-node capacity, rounded up to a power of two (seed 001), at least 2, capped. */
export function splitFactorFor(shape: TrafficShape, options: MitigationPolicyOptions): number {
  const writesPerSecond = (shape.writes * 1000) / shape.windowMs
  const needed = Math.max(2, Math.ceil(writesPerSecond / options.splitWriteCapacity))
  let factor = 1
  while (factor < needed) factor *= 2
  return Math.min(factor, options.maxSplitFactor)
}
