import type { Mitigation } from '@heatsink/protocol'
import type { KeyStats } from '@heatsink/stampede'

/** Where an L1 invalidation came from. */
export type InvalidationSource = 'local' | 'pubsub' | 'tracking' | 'channelLoss' | 'registry'

/** What an operator wants to know about one agent; every counter counts since the agent was created. */
export interface AgentStats {
  /** Wrapped commands called (get, set, del, mget each count one). */
  requests: number
  /** Commands the command table does not know, passed to Redis unchanged. */
  unknownCommands: number
  /** Keys read and keys written by those commands (an MGET of three keys reads three). */
  reads: number
  writes: number
  /** Reads of local_cache keys served from L1, and those that were not. */
  l1Hits: number
  l1Misses: number
  /** Entries in L1 now, and the bytes they hold (estimated; bounded by l1.maxBytes). */
  l1Entries: number
  l1Bytes: number
  /** Entries the LRU pushed out to make room (for more keys, or more bytes). */
  l1Evictions: number
  /**
   * Fills not stored because the key's replies would take more than an eighth of L1's bytes: reads of such a
   * key go to Redis. A hot key counted here needs a larger l1.maxBytes, or another mitigation (split).
   */
  l1TooLarge: number
  /**
   * Fills given up before their reply: their tracking connection was lost, or no reply came within
   * l1.fillTimeoutMs. The reads that waited on them went to Redis; a count that keeps rising names a tracking
   * connection that keeps dropping or stalling.
   */
  l1FillsAbandoned: number
  /**
   * Entries (or fills in flight) dropped because their key changed: written through this agent (local),
   * announced by another agent (pubsub), reported by Redis tracking (tracking); or everything dropped when an
   * invalidation channel was lost (channelLoss), or a key left local_cache in the registry (registry).
   */
  l1Invalidations: Record<InvalidationSource, number>
  /** Reports delivered to the stream, and reports dropped because one was in flight or Redis was away. */
  reportsSent: number
  reportsDropped: number
  /** Partial (fast path) reports sent. */
  partialReports: number
  /** Registry version this agent holds, snapshots loaded after the first, and messages set aside as invalid. */
  registryVersion: number
  registryReloads: number
  badMessages: number
  /**
   * Of those, registry events and snapshots refused because registryKey is set and their MAC is missing or
   * wrong: someone other than the control plane is publishing on the registry channel or writing its hash.
   */
  forgedMessages: number
  /** True while every invalidation channel is live, which is when L1 may be filled and used. */
  invalidationChannelUp: boolean
  /**
   * The report floor in force (the control plane lowers it as the fleet grows), and the keys the control plane
   * asked this agent to watch (reported whenever requested).
   */
  reportFloor: number
  watchedKeys: number
  /** Registered keys by mitigation, as this agent sees the registry. */
  hotKeys: Record<Mitigation, number>
  /** Registry changes applied here: keys given (or changed to) a mitigation, and keys that left the registry. */
  promotions: number
  demotions: number
  /**
   * getOrLoad: calls, and what the stampede guard did for them, summed over keys (see KeyStats in
   * @heatsink/stampede): loader calls (of which background refreshes), callers served by a load they did not
   * start, stale values served, waits on another agent's lease, callers past their maxWaitMs.
   */
  stampede: StampedeTotals
  /** getOrLoad loader calls that threw (background refreshes included). */
  loadFailures: number
  /** Plain reads of coalesce keys: GETs sent to Redis, and reads that shared a GET already in flight. */
  coalescedReads: { sent: number; joined: number }
  /** Reads of replica_read keys sent to a replica, and of those, the ones that went to the primary after all. */
  replicaReads: { sent: number; fellBack: number }
}

/** getOrLoad's counters in AgentStats. */
export interface StampedeTotals extends KeyStats {
  calls: number
}

/** The mutable counters behind AgentStats, shared by the agent's parts; plain fields so that counting is one add. */
export class AgentCounters {
  requests = 0
  unknownCommands = 0
  reads = 0
  writes = 0
  l1Hits = 0
  l1Misses = 0
  l1Evictions = 0
  l1TooLarge = 0
  l1FillsAbandoned = 0
  readonly l1Invalidations: Record<InvalidationSource, number> = {
    local: 0,
    pubsub: 0,
    tracking: 0,
    channelLoss: 0,
    registry: 0,
  }
  reportsSent = 0
  reportsDropped = 0
  partialReports = 0
  registryReloads = 0
  badMessages = 0
  forgedMessages = 0
  loadCalls = 0
  loadFailures = 0
  promotions = 0
  demotions = 0
  coalescedReadsSent = 0
  coalescedReadsJoined = 0
  replicaReads = 0
  replicaReadsFellBack = 0
}

/** What stats() reads besides the counters. */
export interface StatsSources {
  l1Entries: number
  l1Bytes: number
  registryVersion: number
  invalidationChannelUp: boolean
  reportFloor: number
  watchedKeys: number
  hotKeys: Iterable<{ mitigation: Mitigation }>
  /** The stampede guard's totals. */
  loads: KeyStats
}

/** A copy of the counters with the current gauges, for stats(). */
export function statsSnapshot(counters: AgentCounters, sources: StatsSources): AgentStats {
  const c = counters
  const hotKeys: Record<Mitigation, number> = { local_cache: 0, split: 0, coalesce: 0, replica_read: 0 }
  for (const hot of sources.hotKeys) hotKeys[hot.mitigation]++
  return {
    requests: c.requests,
    unknownCommands: c.unknownCommands,
    reads: c.reads,
    writes: c.writes,
    l1Hits: c.l1Hits,
    l1Misses: c.l1Misses,
    l1Entries: sources.l1Entries,
    l1Bytes: sources.l1Bytes,
    l1Evictions: c.l1Evictions,
    l1TooLarge: c.l1TooLarge,
    l1FillsAbandoned: c.l1FillsAbandoned,
    l1Invalidations: { ...c.l1Invalidations },
    reportsSent: c.reportsSent,
    reportsDropped: c.reportsDropped,
    partialReports: c.partialReports,
    registryVersion: sources.registryVersion,
    registryReloads: c.registryReloads,
    badMessages: c.badMessages,
    forgedMessages: c.forgedMessages,
    invalidationChannelUp: sources.invalidationChannelUp,
    reportFloor: sources.reportFloor,
    watchedKeys: sources.watchedKeys,
    hotKeys,
    promotions: c.promotions,
    demotions: c.demotions,
    stampede: { calls: c.loadCalls, ...sources.loads },
    loadFailures: c.loadFailures,
    coalescedReads: { sent: c.coalescedReadsSent, joined: c.coalescedReadsJoined },
    replicaReads: { sent: c.replicaReads, fellBack: c.replicaReadsFellBack },
  }
}
