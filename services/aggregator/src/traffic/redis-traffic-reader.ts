import { formNames, splitKindOf } from '@heatsink/commands'
import type { RecentForms } from '../detection/recent-forms.js'
import type { WindowCounters } from '../detection/window-counters.js'
import type { KeyStats, TrafficReader } from '../traffic-reader.js'
import type { KeyStatsStore, StoredKeyStats } from './key-stats-store.js'
import type { SketchErrors } from './sketch-errors.js'

export interface TrafficReaderOptions {
  counters: WindowCounters
  stats: KeyStatsStore
  sketchErrors?: SketchErrors
  /** The command forms reported on keys recently. */
  forms?: RecentForms
  now: () => number
  windowMs: number
  /** How long after a window ends its reports are taken as complete. */
  graceMs: number
}

/** Reads cluster-wide rates and mitigation statistics from Redis, for the REST API. */
export class RedisTrafficReader implements TrafficReader {
  readonly #options: TrafficReaderOptions

  constructor(options: TrafficReaderOptions) {
    this.#options = options
  }

  /** The key's cluster-wide rate in the latest complete window (or the one before); null without recent data. */
  async requestsPerSecond(key: string): Promise<number | null> {
    const { counters, windowMs } = this.#options
    const latest = this.latestCompleteWindow()
    for (const window of [latest, latest - windowMs]) {
      const [counts] = await counters.read([key], window)
      if (counts !== undefined) return (counts.count * 1000) / windowMs
    }
    return null
  }

  /** The key's statistics summed over agents with recent reports; undefined when nothing is known. */
  async keyStats(key: string): Promise<KeyStats | undefined> {
    const { stats, windowMs } = this.#options
    const oldest = this.latestCompleteWindow() - 2 * windowMs
    const recent = (await stats.read(key)).filter((s) => s.windowStart >= oldest)
    const requestsPerSecond = await this.requestsPerSecond(key)
    const forms = (await this.#options.forms?.seen(key, this.#options.now())) ?? 0
    if (recent.length === 0 && requestsPerSecond === null && forms === 0) return undefined
    const sum = (
      field: keyof Pick<
        StoredKeyStats,
        'l1Hits' | 'l1Misses' | 'l1Fills' | 'misses' | 'coalescedWaiters' | 'upstreamLoads'
      >,
    ) => recent.reduce((total, s) => total + (s[field] ?? 0), 0)
    const l1Hits = sum('l1Hits')
    const lookups = l1Hits + sum('l1Misses')
    const loads = sum('upstreamLoads')
    const splitShardCounts: number[] = []
    for (const s of recent) {
      s.splitShardCounts?.forEach((count, i) => {
        splitShardCounts[i] = (splitShardCounts[i] ?? 0) + count
      })
    }
    return {
      requestsPerSecond: requestsPerSecond ?? 0,
      hitRate: lookups === 0 ? null : Math.max(0, lookups - sum('misses')) / lookups,
      localCacheHitRatio: lookups === 0 ? null : l1Hits / lookups,
      localCacheAbsorbedRatio: lookups === 0 ? null : 1 - Math.min(lookups, sum('l1Fills')) / lookups,
      coalesceCollapseRatio: loads === 0 ? null : (sum('coalescedWaiters') + loads) / loads,
      splitShardCounts,
      sketchError: (await this.#options.sketchErrors?.read(key, oldest)) ?? null,
      agents: new Set(recent.map((s) => s.agentId)).size,
      commandForms: formNames(forms),
      splitKind: splitKindOf(forms) ?? null,
    }
  }

  /** Start of the newest window whose reports are taken as complete. */
  latestCompleteWindow(): number {
    const { now, windowMs, graceMs } = this.#options
    return Math.floor((now() - graceMs) / windowMs) * windowMs - windowMs
  }
}
