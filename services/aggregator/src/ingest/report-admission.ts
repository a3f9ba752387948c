import type { WindowReport } from '@heatsink/protocol'

/** Why a well-formed report is refused: its dead-letter reason and a message for the operator. */
export interface Rejection {
  reason: string
  message: string
}

/** A report about a window of another length or grid than this aggregator's. */
export const WINDOW_MISMATCH = 'E_WINDOW_MISMATCH'
/** A report about a window that starts later than this aggregator's clock allows. */
export const FROM_THE_FUTURE = 'E_FROM_THE_FUTURE'

export interface ReportAdmissionOptions {
  /** HEATSINK_WINDOW_MS: the only window length counted. */
  windowMs: number
  /** How far ahead of this aggregator's clock an agent's clock may run. */
  maxClockSkewMs: number
  now: () => number
}

/**
 * Judges a decoded report before its counts are applied. The schema says a report is well formed; this says it
 * describes one of this aggregator's windows. Counts land in the counters of the window their report names and
 * are judged against a per-window threshold, so a report of another length (an agent configured with another
 * `windowMs`, or a forged `windowMs: 1`), one off the epoch-aligned grid every agent uses, or one dated ahead
 * of the clock (it would sit in a window nobody else reports to yet, and outlive the counters' retention) would
 * skew detection and could promote a key. Such a report is refused, not repaired: its counts cannot be known
 * to belong to any window.
 *
 * Agents always report the configured length, even for a last window that `close()` cut short (its counts
 * belong to that window), so only a misconfigured or forged report is refused.
 */
export function reportAdmission(
  options: ReportAdmissionOptions,
): (report: WindowReport) => Rejection | undefined {
  const { windowMs, maxClockSkewMs, now } = options
  return (report) => {
    if (report.windowMs !== windowMs) {
      return {
        reason: WINDOW_MISMATCH,
        message: `windowMs ${report.windowMs} differs from this aggregator's window of ${windowMs} ms (HEATSINK_WINDOW_MS)`,
      }
    }
    if (report.windowStart % windowMs !== 0) {
      return {
        reason: WINDOW_MISMATCH,
        message: `windowStart ${report.windowStart} is not a multiple of this aggregator's window of ${windowMs} ms`,
      }
    }
    const ahead = report.windowStart - now()
    if (ahead > maxClockSkewMs) {
      return {
        reason: FROM_THE_FUTURE,
        message: `windowStart ${isoTime(report.windowStart)} is ${ahead} ms ahead of this aggregator's clock, more than HEATSINK_MAX_CLOCK_SKEW_MS (${maxClockSkewMs} ms)`,
      }
    }
    return undefined
  }
}

// EpochMs allows values beyond what Date can show; the number is still worth printing then.
function isoTime(ms: number): string {
  const date = new Date(ms)
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString()
}
