import type { LiveHotKey, LiveState, RatePoint, RegistryEntry } from '@heatsink/protocol'
import type { AgentDirectory } from '../agents/agent-directory.js'
import type { WindowCounters } from '../detection/window-counters.js'
import type { EventLog } from '../registry/event-log.js'
import type { RegistryService } from '../registry/registry-service.js'
import type { MissStormLog } from '../storms/miss-storm-log.js'
import type { KeyStatsStore } from '../traffic/key-stats-store.js'
import type { KeyStats, TrafficReader } from '../traffic-reader.js'

/** Events the live state carries; older ones are on GET /events. */
const LIVE_EVENTS = 30

export interface LiveStateReaderOptions {
  registry: RegistryService
  events: EventLog
  /** The miss storms raised; without it the state lists none. */
  missStorms?: MissStormLog
  agents: AgentDirectory
  traffic: TrafficReader
  /** Each agent's latest statistics per hot key, for the reads they answered without Redis. */
  keyStats: KeyStatsStore
  counters: WindowCounters
  now: () => number
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
  async state(): Promise<LiveState & { absorbedReadsPerSecond: number }> {
    const { registry, events, missStorms, agents, traffic, hotRps, coolRps, windowMs, writesNeedToken } =
      this.#options
    const [snapshot, recent, storms, agentList, rates] = await Promise.all([
      registry.snapshot(),
      events.recent({ limit: LIVE_EVENTS }),
      missStorms?.recent({ limit: LIVE_EVENTS }) ?? [],
      agents.list(),
      events.promotionRates(),
    ])
    const keys = snapshot.entries.map((entry) => entry.key)
    const stats = new Map<string, KeyStats | undefined>()
    const [absorbedReadsPerSecond] = await Promise.all([
      this.#absorbed(keys),
      ...keys.map(async (key) => stats.set(key, await traffic.keyStats(key))),
    ])
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
      missStorms: storms,
      agents: agentList,
      absorbedReadsPerSecond,
    }
  }

  // Reads the agents answered without a round trip to Redis, per second, from each agent's latest window of each
  // hot key: L1 hits, and coalesced reads that waited on another read's round trip instead of sending their own.
  async #absorbed(keys: readonly string[]): Promise<number> {
    const { keyStats, now, windowMs } = this.#options
    // An agent whose latest statistics are older than this has stopped reporting the key; its reads are not now.
    const oldest = now() - 3 * windowMs
    const perKey = await Promise.all(keys.map((key) => keyStats.read(key)))
    let total = 0
    for (const stored of perKey) {
      for (const s of stored) {
        if (s.windowStart >= oldest) total += ((s.l1Hits + s.coalescedWaiters) * 1000) / s.windowMs
      }
    }
    return total
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
