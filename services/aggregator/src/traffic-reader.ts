import type { SplitKind } from '@heatsink/commands'
import type { KeySketchError } from './traffic/sketch-errors.js'

/** How one key's traffic and mitigation behaved in the latest complete window, summed over the agents. */
export interface KeyStats {
  /** Cluster-wide requests per second. */
  requestsPerSecond: number
  /** Share of the key's reads answered by a cache (L1 or Redis) rather than missing; null when nothing was read. */
  hitRate: number | null
  /** Share of reads served from the agents' L1 caches; null when the key is not locally cached. */
  localCacheHitRatio: number | null
  /**
   * Share of the agents' reads of a locally cached key that did not reach Redis: L1 hits, and misses that shared
   * another's fill; null when the key is not locally cached (absent from readers that do not track it).
   */
  localCacheAbsorbedRatio?: number | null
  /**
   * Callers served per upstream load, (coalesced waiters + loads) / loads: 1 means no coalescing happened;
   * null when nothing was loaded.
   */
  coalesceCollapseRatio: number | null
  /** Requests per split copy, indexed by copy; empty when the key is not split. */
  splitShardCounts: number[]
  /** Agents that reported the key in the window. */
  agents: number
  /** The sketch's error on this key where agents sampled it (one key in 256 is); null or absent otherwise. */
  sketchError?: KeySketchError | null
  /** The command forms agents reported on the key over the forms memory (FORMS_MEMORY_WINDOWS), by name. */
  commandForms?: string[]
  /** The one split kind those forms belong to, or null: then the key is never split automatically. */
  splitKind?: SplitKind | null
}

/** What the REST API reads about live traffic; implemented by the ingest side (src/traffic/). */
export interface TrafficReader {
  /** Cluster-wide rate in the latest complete window; null if there is no recent traffic for the key. */
  requestsPerSecond(key: string): Promise<number | null>
  /** The key's statistics; undefined when there is no traffic data for it. */
  keyStats(key: string): Promise<KeyStats | undefined>
}

/** A TrafficReader that knows no traffic, for an aggregator running without ingest. */
export const NO_TRAFFIC: TrafficReader = {
  requestsPerSecond: async () => null,
  keyStats: async () => undefined,
}
