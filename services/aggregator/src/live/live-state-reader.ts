import type { LiveHotKey, LiveState, RatePoint, RegistryEntry } from '@heatsink/protocol'
import type { AgentDirectory } from '../agents/agent-directory.js'
import type { WindowCounters } from '../ingest/window-counters.js'
import type { EventLog } from '../registry/event-log.js'
import type { RegistryService } from '../registry/registry-service.js'
import type { KeyStats, TrafficReader } from '../traffic-reader.js'

/** Events the live state carries; older ones are on GET /events. */
const LIVE_EVENTS = 30

export interface LiveStateReaderOptions {
  registry: RegistryService
  events: EventLog
  agents: AgentDirectory
  traffic: TrafficReader
  counters: WindowCounters
  hotRps: number
  coolRps: number
  windowMs: number
  /** Whether the API has a token, so the page can say that writes need one before a write fails. */
  writesNeedToken: boolean
}

/** Reads what the dashboard shows, from Postgres and Redis only, so every replica shows the same picture. */
export class LiveStateReader {
  readonly #options: LiveStateReaderOptions

  constructor(options: LiveStateReaderOptions) {
    this.#options = options
  }

  /** The registry, each hot key's statistics, the latest events and the agents, as of now. */
  async state(): Promise<LiveState & { stats: Map<string, KeyStats | undefined> }> {
    const { registry, events, agents, traffic, hotRps, coolRps, windowMs, writesNeedToken } = this.#options
    const [snapshot, recent, agentList, rates] = await Promise.all([
      registry.snapshot(),
      events.recent({ limit: LIVE_EVENTS }),
      agents.list(),
      events.promotionRates(),
    ])
    const stats = new Map<string, KeyStats | undefined>()
    await Promise.all(snapshot.entries.map(async (e) => stats.set(e.key, await traffic.keyStats(e.key))))
    return {
      hotRps,
      coolRps,
      windowMs,
      writesNeedToken,
      registryVersion: snapshot.version,
      hotkeys: snapshot.entries.map((entry) =>
        toLiveHotKey(entry, stats.get(entry.key), rates.get(entry.key)),
      ),
      events: recent,
      agents: agentList,
      stats,
    }
  }

  /**
   * The chart's point for one window: the rate of every hot key, and of every other key at half the hot
   * threshold or more. `absorbed` is known only for the current window (the agents' statistics are their latest).
   */
  async point(
    windowStart: number,
    hotKeys: ReadonlySet<string>,
    absorbed: number | null,
  ): Promise<RatePoint> {
    const { counters, hotRps, windowMs } = this.#options
    const totals = await counters.totals(windowStart)
    const perSecond = 1000 / windowMs
    const point: RatePoint = { windowStart, hot: {}, warming: {}, absorbedReadsPerSecond: absorbed }
    for (const key of hotKeys) point.hot[key] = (totals.get(key) ?? 0) * perSecond
    for (const [key, count] of totals) {
      const rate = count * perSecond
      if (!hotKeys.has(key) && rate >= hotRps / 2) point.warming[key] = rate
    }
    return point
  }
}

/** Reads the agents' L1 caches answered, per second, summed over the hot keys. */
export function absorbedReads(stats: ReadonlyMap<string, KeyStats | undefined>): number {
  let total = 0
  for (const s of stats.values()) {
    if (s !== undefined && s.localCacheHitRatio !== null) total += s.requestsPerSecond * s.localCacheHitRatio
  }
  return total
}

function toLiveHotKey(
  entry: RegistryEntry,
  stats: KeyStats | undefined,
  rateAtPromotion?: number,
): LiveHotKey {
  const rps = stats?.requestsPerSecond ?? null
  return {
    key: entry.key,
    mitigation: entry.mitigation,
    splitFactor: entry.splitFactor,
    source: entry.source,
    detectedAt: entry.detectedAt,
    expiresAt: entry.expiresAt,
    version: entry.version,
    requestsPerSecond: rps,
    localCacheHitRatio: stats?.localCacheHitRatio ?? null,
    coalesceCollapseRatio: stats?.coalesceCollapseRatio ?? null,
    redisReadsBefore: rateAtPromotion ?? null,
    // Only an L1 keeps reads from Redis outright; other mitigations change how reads reach it, not how many.
    redisReadsAfter:
      rps === null || stats?.localCacheHitRatio === null || stats === undefined
        ? null
        : rps * (1 - stats.localCacheHitRatio),
    splitShardCounts: stats?.splitShardCounts ?? [],
  }
}
