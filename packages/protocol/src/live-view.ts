// What the aggregator's live view (GET /live, server-sent events) and its listing routes (GET /agents,
// GET /events) send to the dashboard and the CLI. The aggregator writes these and nothing reads them back into
// Heatsink, so they are plain types rather than schemas: a reader that gets an older aggregator's frame simply
// finds a field missing.

import type { MissStorm } from './miss-storm.js'

/** One point of the rate chart: cluster-wide requests per second in one complete window. */
export interface RatePoint {
  /** Start of the window, epoch ms; also the SSE event id, so a reconnect resumes after it. */
  windowStart: number
  /** Registered (hot) keys: key -> req/s in the window (0 when no agent reported it). */
  hot: Record<string, number>
  /** Keys not registered whose rate is at least half the hot threshold. */
  warming: Record<string, number>
  /**
   * Reads of hot keys the agents answered without a round trip to Redis (L1 hits and coalesced reads), per
   * second, from their latest statistics; null for windows read back from history, where they are not kept.
   */
  absorbedReadsPerSecond: number | null
}

/** A hot key with its live statistics. */
export interface LiveHotKey {
  key: string
  mitigation: 'local_cache' | 'split' | 'coalesce' | 'replica_read'
  splitFactor: number
  source: 'auto' | 'manual'
  detectedAt: number
  expiresAt: number | null
  version: number
  requestsPerSecond: number | null
  localCacheHitRatio: number | null
  coalesceCollapseRatio: number | null
  /** The cluster-wide rate when the key was promoted: every read reached Redis then. */
  redisReadsBefore: number | null
  /** Reads per second that still reach Redis (L1 misses for local_cache keys); null when not known. */
  redisReadsAfter: number | null
  splitShardCounts: number[]
}

/** One registry change, from the audit trail. */
export interface RegistryChange {
  version: number
  key: string
  type: 'promote' | 'update' | 'demote'
  source: 'auto' | 'manual'
  /** Who made it: `api` for the REST API and the dashboard, a replica id for automatic changes. */
  actor: string
  reason: string
  mitigation: 'local_cache' | 'split' | 'coalesce' | 'replica_read'
  splitFactor: number
  ttlSeconds: number | null
  requestsPerSecond: number | null
  at: number
  /** Milliseconds from the reports first showing the key hot to the registry write; null for manual changes. */
  onsetToMitigationMs: number | null
}

/** An agent as the aggregator last heard from it. */
export interface AgentStatus {
  agentId: string
  /** When a replica last took in a report of it, epoch ms. */
  lastReportAt: number
  lastReportAgeMs: number
  /** Reports the agent said it dropped, summed over the reports received. */
  reportsDropped: number
  /** The registry version the agent held at its last report; null for agents that do not say. */
  registryVersion: number | null
  /**
   * Its sketch's error in the latest window it measured one (over the keys it samples, estimate against exact
   * count); null for agents that do not sample.
   */
  sketchError: {
    sampled: number
    meanRelativeError: number
    maxRelativeError: number
    overBound: number
  } | null
  /** No report for three windows: the agent is gone, stuck, or cannot reach Redis. */
  stale: boolean
}

/** The current picture, sent with every point. */
export interface LiveState {
  hotRps: number
  coolRps: number
  windowMs: number
  /** Promote and demote need `Authorization: Bearer <HEATSINK_API_TOKEN>`. */
  writesNeedToken: boolean
  registryVersion: number
  hotkeys: LiveHotKey[]
  events: RegistryChange[]
  /** The latest miss storms, newest first (absent from aggregators older than the field). */
  missStorms?: MissStorm[]
  agents: AgentStatus[]
}

/** One SSE message of GET /live (`event: frame`): the new points since the last message and the state now. */
export interface LiveFrame {
  points: RatePoint[]
  /** null only when the replica could not read anything yet (see `problem`). */
  state: LiveState | null
  /** Why the view is not moving (Redis or Postgres unreachable); null when it is live. */
  problem: string | null
}

/** Body of GET /hotkeys/{key}/stats, as clients read it (the aggregator's schema is in its http/schemas.ts). */
export interface KeyStatsBody {
  key: string
  requestsPerSecond: number | null
  hitRate: number | null
  localCacheHitRatio: number | null
  coalesceCollapseRatio: number | null
  splitShardCounts: number[]
  agents: number
  /** The command forms agents reported on the key recently (absent from aggregators older than the field). */
  commandForms?: string[]
  /** The one split kind those forms belong to; null: never split automatically. */
  splitKind?: string | null
  /** Transactions watching the key aborted by WATCH per second (absent from aggregators older than the field). */
  watchAbortsPerSecond?: number
  /** Sustained write contention on the key (see GET /hotkeys/{key}/stats). */
  contended?: boolean
}
