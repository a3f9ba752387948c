import type { Logger } from 'pino'
import type { Detector } from '../detection/detector.js'
import type { FleetTuner } from '../detection/fleet-tuner.js'
import type { KeyStatsStore } from '../traffic/key-stats-store.js'
import type { SketchErrors } from '../traffic/sketch-errors.js'
import type { ReceivedReport } from './report-consumer.js'
import type { Crossing, WindowCounters } from './window-counters.js'

export interface ReportIngestOptions {
  counters: WindowCounters
  stats: KeyStatsStore
  /** The sketch's error as agents measured it: metrics, and samples per key. */
  sketchErrors?: SketchErrors
  detector: Detector
  /** Sizes reporting to the fleet and watches keys whose sum is not settled yet. */
  fleet?: FleetTuner
  now: () => number
  /** Reports whose window ended longer ago than this describe traffic too old to act on. */
  maxReportAgeMs: number
  metrics: {
    reports: { inc(value?: number): void }
    entries: { inc(value?: number): void }
    stale: { inc(value?: number): void }
    reportLag: { observe(seconds: number): void }
  }
  log: Logger
}

/**
 * What a replica does with each batch of reports: fold the counts into the cluster-wide window sums, keep the
 * per-key statistics, and promote the keys whose sum crossed the threshold — at once, with the report that
 * crossed it. Reports in a batch are applied concurrently: applying commutes, so order does not matter.
 *
 * A partial report is also judged over a sliding second: the window so far plus the previous window's count
 * weighted by the part of it still inside the last second. Without this, a surge that begins late in a window
 * is judged on a fraction of a window, and then on a new window that starts again from zero.
 */
export class ReportIngest {
  readonly #options: ReportIngestOptions

  constructor(options: ReportIngestOptions) {
    this.#options = options
  }

  /** Applies a batch; resolves when every report's effects are in Redis (and promotions are requested). */
  readonly process = async (received: readonly ReceivedReport[]): Promise<void> => {
    const { counters, stats, sketchErrors, detector, fleet, now, maxReportAgeMs, metrics } = this.#options
    await Promise.all(
      received.map(async ({ report }) => {
        const windowEnd = report.windowStart + report.windowMs
        const age = now() - windowEnd
        if (age > maxReportAgeMs) {
          metrics.stale.inc()
          return
        }
        const [{ crossings, warm, unresolved }] = await Promise.all([
          counters.apply(report, fleet),
          stats.record(report),
          sketchErrors?.record(report),
        ])
        if (fleet !== undefined && warm.length + unresolved.length > 0) fleet.watch([...warm, ...unresolved])
        metrics.reports.inc()
        metrics.entries.inc(report.candidates.length)
        if (!report.partial) metrics.reportLag.observe(Math.max(0, age) / 1000)
        if (report.partial && warm.length > 0) crossings.push(...(await this.#slidingCrossings(warm)))
        if (report.partial && report.rates !== undefined)
          crossings.push(...(await counters.applyRates(report)))
        if (crossings.length > 0) await detector.onCrossings(crossings)
      }),
    )
  }

  // Warm keys whose count over the last second (this window so far, plus the part of the previous window still
  // inside that second) reaches the threshold.
  async #slidingCrossings(warm: readonly Crossing[]): Promise<Crossing[]> {
    const { counters, now } = this.#options
    const windowStart = warm[0]?.windowStart ?? 0
    const windowMs = counters.windowMs
    const elapsed = (now() - windowStart) / windowMs
    if (elapsed >= 1 || elapsed < 0) return []
    const previous = await counters.read(
      warm.map((w) => w.key),
      windowStart - windowMs,
    )
    const carried = 1 - elapsed
    const hot: Crossing[] = []
    warm.forEach((w, i) => {
      const before = previous[i]
      if (before === undefined) return
      const count = Math.round(w.count + before.count * carried)
      if (count < counters.hotPerWindow) return
      hot.push({
        ...w,
        count,
        writes: Math.round(w.writes + before.writes * carried),
        misses: Math.round(w.misses + before.misses * carried),
      })
    })
    return hot
  }
}
