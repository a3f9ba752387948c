// A miss storm as the aggregator lists it (GET /events, the live view) and the dashboard and the CLI show it.
// Like live-view.ts, a plain type: nothing reads it back into Heatsink's decisions.

/** What Heatsink did about a storm. */
export type MissStormAction =
  /** The key was not registered: it was promoted to coalesce, so each agent sends one load per miss. */
  | 'coalesce_applied'
  /** The key was registered already; its mitigation (`mitigation`) was left as it was. */
  | 'already_mitigated'
  /** Promoting the key failed (Postgres unreachable, say): logged; the key's next storm tries again. */
  | 'promotion_failed'

/** One miss storm: a key whose misses per second jumped past the floor and a multiple of its recent baseline. */
export interface MissStorm {
  /** The storm stream's entry id: increasing, so a follower asks for the storms after the last it saw. */
  id: string
  type: 'miss_storm'
  key: string
  /** host:port of the Redis that owns the key (on a Cluster, its slot's master); null when it cannot be told. */
  node: string | null
  /** Cluster-wide misses per second in the window that raised the storm. */
  missesPerSecond: number
  /** Mean misses per second over the windows before it. */
  baselinePerSecond: number
  action: MissStormAction
  /** The key's mitigation after the action (null when it has none). */
  mitigation: 'local_cache' | 'split' | 'coalesce' | 'replica_read' | null
  /** When it was raised, epoch ms. */
  at: number
}
