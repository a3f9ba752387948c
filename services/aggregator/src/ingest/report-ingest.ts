import type { Logger } from 'pino'
import type { Detector } from '../detection/detector.js'
import type { KeyStatsStore } from '../traffic/key-stats-store.js'
import type { ReceivedReport } from './report-consumer.js'
import type { WindowCounters } from './window-counters.js'

export interface ReportIngestOptions {
  counters: WindowCounters
  stats: KeyStatsStore
  detector: Detector
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
 */
export class ReportIngest {
  readonly #options: ReportIngestOptions

  constructor(options: ReportIngestOptions) {
    this.#options = options
  }

  /** Applies a batch; resolves when every report's effects are in Redis (and promotions are requested). */
  readonly process = async (received: readonly ReceivedReport[]): Promise<void> => {
    const { counters, stats, detector, now, maxReportAgeMs, metrics } = this.#options
    await Promise.all(
      received.map(async ({ report }) => {
        const windowEnd = report.windowStart + report.windowMs
        const age = now() - windowEnd
        if (age > maxReportAgeMs) {
          metrics.stale.inc()
          return
        }
        const [crossings] = await Promise.all([counters.apply(report), stats.record(report)])
        metrics.reports.inc()
        metrics.entries.inc(report.candidates.length)
        if (!report.partial) metrics.reportLag.observe(Math.max(0, age) / 1000)
        if (crossings.length > 0) await detector.onCrossings(crossings)
      }),
    )
  }
}
