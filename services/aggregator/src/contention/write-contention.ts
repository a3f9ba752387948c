import { readWatchAborts, type WindowReport } from '@heatsink/protocol'
import type { Logger } from 'pino'
import type { ContentionCounters } from './contention-counters.js'

/** When a key's contention is sustained (HEATSINK_CONTENTION_*). */
export interface ContentionSettings {
  /** Transactions aborted by WATCH per second, cluster-wide, that a window must reach... */
  minPerSecond: number
  /** ...in each of this many complete windows in a row. */
  windows: number
}

/**
 * Defaults: 10 aborted transactions a second on one key means its optimistic writers redo their work ten times a
 * second, and 3 windows in a row (3 s) tells a key that stays contended from a burst.
 */
export const DEFAULT_CONTENTION: ContentionSettings = { minPerSecond: 10, windows: 3 }

/** A key's write contention as GET /hotkeys/{key}/stats shows it. */
export interface KeyContention {
  /** Cluster-wide transactions aborted by WATCH per second, in the latest complete window. */
  watchAbortsPerSecond: number
  /** Whether the rule's floor held in each of the last `windows` complete windows. */
  contended: boolean
}

export interface WriteContentionOptions {
  counters: ContentionCounters
  settings: ContentionSettings
  windowMs: number
  /** Start of the latest window whose reports are all in. */
  latestCompleteWindow: () => number
  /** Reports whose watchAborts was malformed and set aside. */
  setAside: { inc(): void }
  log: Logger
}

/**
 * Write contention per key: takes each report's `watchAborts` into the window sums, and judges a key contended
 * when the sums stay at the floor. A report's malformed `watchAborts` is set aside and counted; the rest of the
 * report is applied as usual.
 */
export class WriteContention {
  readonly #options: WriteContentionOptions

  constructor(options: WriteContentionOptions) {
    this.#options = options
  }

  /** Takes in a report's transactions aborted by WATCH; a failure is logged, never thrown. */
  async onReport(report: WindowReport): Promise<void> {
    const aborts = readWatchAborts(report)
    if (aborts === 'malformed') {
      this.#options.setAside.inc()
      this.#options.log.warn({ agentId: report.agentId, seq: report.seq }, 'malformed watchAborts set aside')
      return
    }
    if (aborts.length === 0) return
    try {
      await this.#options.counters.apply(report.agentId, report.windowStart, aborts)
    } catch (error) {
      this.#options.log.error({ err: error, agentId: report.agentId }, 'applying watchAborts failed')
    }
  }

  /** The key's contention over the latest complete windows. */
  async of(key: string): Promise<KeyContention> {
    const { counters, settings, windowMs, latestCompleteWindow } = this.#options
    const latest = latestCompleteWindow()
    const windows = Array.from({ length: settings.windows }, (_, i) => latest - i * windowMs)
    const counts = await counters.perWindow(key, windows)
    const floor = (settings.minPerSecond * windowMs) / 1000
    return {
      watchAbortsPerSecond: ((counts[0] ?? 0) * 1000) / windowMs,
      contended: counts.every((count) => count >= floor),
    }
  }
}
