import type { Logger } from 'pino'
import type { Detector } from '../detection/detector.js'
import type { FleetTuner } from '../detection/fleet-tuner.js'
import { type Applied, slidingSecondCrossings } from '../detection/hot-key-rule.js'
import type { WindowCounters } from '../detection/window-counters.js'
import type { KeyStatsStore } from '../traffic/key-stats-store.js'
import type { SketchErrors } from '../traffic/sketch-errors.js'
import type { ReceivedReport } from './report-consumer.js'

export interface ReportIngestOptions {
  counters: WindowCounters
  stats: KeyStatsStore
  /** The sketch's error as agents measured it: metrics, and samples per key. */
  sketchErrors?: SketchErrors
  detector: Detector
  /** Sizes reporting to the fleet and watches keys whose sum is not settled yet. */
  fleet?: FleetTuner
  /** Told of each report once it is in the sums, with what applying it found: miss storms, write contention. They never throw. */
  watchers?: ReadonlyArray<{ onReport(report: ReceivedReport['report'], applied: Applied): Promise<void> }>
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
 * per-key statistics, and hand the keys that turned hot (by the rule of detection/hot-key-rule.ts: the window's
 * threshold, the sliding second of a partial report, measured rates) to the detector, at once, with the report
 * that crossed. Reports in a batch are applied concurrently: applying commutes, so order does not matter.
 */
export class ReportIngest {
  readonly #options: ReportIngestOptions

  constructor(options: ReportIngestOptions) {
    this.#options = options
  }

  /** Applies a batch; resolves when every report's effects are in Redis (and promotions are requested). */
  readonly process = async (received: readonly ReceivedReport[]): Promise<void> => {
    const { counters, stats, sketchErrors, detector, fleet, watchers, now, maxReportAgeMs, metrics } =
      this.#options
    await Promise.all(
      received.map(async ({ report }) => {
        const windowEnd = report.windowStart + report.windowMs
        const age = now() - windowEnd
        if (age > maxReportAgeMs) {
          metrics.stale.inc()
          return
        }
        const [applied] = await Promise.all([
          counters.apply(report, fleet),
          stats.record(report),
          sketchErrors?.record(report),
        ])
        const { crossings, warm, unresolved } = applied
        if (fleet !== undefined && warm.length + unresolved.length > 0) fleet.watch([...warm, ...unresolved])
        metrics.reports.inc()
        metrics.entries.inc(report.candidates.length)
        if (!report.partial) metrics.reportLag.observe(Math.max(0, age) / 1000)
        if (report.partial && warm.length > 0)
          crossings.push(...(await slidingSecondCrossings(counters, warm, now())))
        if (report.partial && report.rates !== undefined)
          crossings.push(...(await counters.applyRates(report)))
        await Promise.all([
          crossings.length > 0 ? detector.onCrossings(crossings) : undefined,
          ...(watchers ?? []).map((watcher) => watcher.onReport(report, applied)),
        ])
      }),
    )
  }
}
