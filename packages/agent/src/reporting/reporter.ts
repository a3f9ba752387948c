import {
  encodeReport,
  type SketchError,
  STREAM_FIELD,
  type WatchAborts,
  WIRE_VERSION,
} from '@heatsink/protocol'
import type { Clock, HeavyHitter, WindowRecorder, WindowSummary } from '@heatsink/sketch'
import type { Cluster, Redis } from 'ioredis'
import type { AgentEvents } from '../events/agent-events.js'
import type { AgentCounters } from '../events/stats.js'
import type { AgentLogger } from '../options/agent-options.js'
import {
  candidatesAndForms,
  type HotKeyStatsSources,
  onTheWire,
  reportedKeyStats,
  sketchError,
} from './report-contents.js'

/** Approximate cap on every report stream (XADD MAXLEN ~). */
export const REPORT_STREAM_MAXLEN = 10_000

/**
 * Each report sets its stream to expire this long after it, so streams of agents that went away (with no
 * aggregator left to read them) do not stay forever. Minutes: far beyond any report's usefulness (the aggregator
 * skips reports older than HEATSINK_MAX_REPORT_AGE_MS), so no live stream expires while agents report to it.
 */
export const REPORT_STREAM_TTL_MS = 5 * 60_000

/** Keys sampled to measure the sketch's error: one in this many, chosen by fingerprint. */
export const DEFAULT_ERROR_SAMPLING = 256

/** What a Reporter needs. */
export interface ReporterOptions extends HotKeyStatsSources {
  /** A connection of the reporter's own, without offline queue: a report that cannot go now fails at once. */
  connection: Redis | Cluster
  /** How long a report may take before it counts as dropped (reportTimeoutMs). */
  timeoutMs: number
  stream: string
  agentId: string
  recorder: WindowRecorder
  windowMs: number
  counters: AgentCounters
  /** Told of each report dropped, and why. */
  events: AgentEvents
  maxPartialsPerWindow: number
  /** The fast-report floor: a key at or above it in the open window, not yet registered, keeps partials going. */
  fastReportFloor: number
  /** Transactions aborted by WATCH per key in the window now ending (and reset by the call); final reports carry them. */
  watchAborts?: () => WatchAborts
  /** Times the follow-up partials. */
  clock: Clock
  log: AgentLogger
}

/**
 * Sends window reports to the agent's report stream: one per window end, and partial ones at once when a key
 * crosses the fast-report floor, then every quarter window while such a key is still unregistered (up to a cap
 * per window). One partial at the crossing alone carries only the floor's worth of counts; the follow-ups let
 * the aggregator's sum cross the hot threshold mid-window instead of at the window's end.
 * Reporting never waits and never queues: with one report still in flight, or the connection down, a report is
 * dropped and counted, and the next delivered report carries the count.
 */
// The fast path measures a warming key's rate over at least this long after it crosses the floor, then judges it.
const RATE_SPAN_MS = 100
// A shorter span than this (a partial sent soon after another) says too little about a rate to report it.
const MIN_RATE_SPAN_MS = 50

export class Reporter {
  readonly #options: ReporterOptions
  // Per warming key, its count and the time when last measured: the next partial reports the rate since.
  readonly #rateMarks = new Map<string, { count: number; at: number }>()
  #seq = 0
  #pendingDropped = 0
  #inFlight: Promise<void> | undefined
  #partialsThisWindow = 0
  #partialScheduled = false
  #followUp: unknown
  #stopped = false

  constructor(options: ReporterOptions) {
    this.#options = options
  }

  /** TumblingWindows' onWindow: reports the closed window with this window's per-hot-key statistics. */
  readonly onWindow = (summary: WindowSummary): void => {
    this.#partialsThisWindow = 0
    this.#rateMarks.clear()
    this.#options.clock.clearTimeout(this.#followUp)
    // The report names the window its counts belong to, by start and by the configured length, even when this
    // agent saw only part of it (close() cuts its last window short): aggregators refuse other lengths.
    this.#send(
      summary.windowStart,
      this.#options.windowMs,
      summary.total,
      summary.hitters,
      false,
      [],
      sketchError(summary, this.#options.view),
    )
  }

  /**
   * The recorder's onFloorCrossed: a key reached the fast-report floor. Runs inside a request, so it only
   * schedules; registered keys are skipped, being mitigated already, and a window sends at most a few partials.
   */
  readonly onFloorCrossed = (key: string, count: number): void => {
    if (this.#stopped || this.#options.view.get(key) !== undefined) return
    if (!this.#rateMarks.has(key)) this.#rateMarks.set(key, { count, at: this.#options.clock.now() })
    if (this.#partialScheduled) return
    if (this.#partialsThisWindow >= this.#options.maxPartialsPerWindow) return
    this.#partialScheduled = true
    setImmediate(this.#sendPartial)
  }

  /** Stops partial reports (on close). */
  stop(): void {
    this.#stopped = true
    this.#options.clock.clearTimeout(this.#followUp)
  }

  /** Resolves once no report is in flight, or after `timeoutMs`. */
  async idle(timeoutMs: number): Promise<void> {
    const inFlight = this.#inFlight
    if (inFlight === undefined) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      inFlight,
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs)
      }),
    ])
    clearTimeout(timer)
  }

  readonly #sendPartial = (): void => {
    this.#partialScheduled = false
    if (this.#stopped || this.#partialsThisWindow >= this.#options.maxPartialsPerWindow) return
    this.#partialsThisWindow++
    const { recorder, windowMs, counters, clock } = this.#options
    const hitters = recorder.peek()
    const rates = this.#rates(hitters)
    // A partial carries only the keys past the fast floor, the ones detection is waiting for: a few entries,
    // so that partials cost little even when a busy key that is not hot cluster-wide sets them off every window.
    const fast = hitters.filter((hitter) => hitter.count >= this.#options.fastReportFloor)
    if (this.#send(recorder.windowStart, windowMs, recorder.total, fast, true, rates))
      counters.partialReports++
    if (this.#warming(hitters) && this.#partialsThisWindow < this.#options.maxPartialsPerWindow) {
      this.#followUp = clock.setTimeout(
        () => {
          // Judged again when due: the key may have been registered meanwhile.
          if (this.#partialScheduled || !this.#warming(recorder.peek())) return
          this.#partialScheduled = true
          this.#sendPartial()
        },
        // The first follow-up comes as soon as a rate can be measured, the next ones every quarter window.
        rates.length === 0 ? Math.min(RATE_SPAN_MS, windowMs / 4) : windowMs / 4,
      )
    }
  }

  // The requests per second of each warming key since it was last measured (marks move to now), for the fast
  // path: a surge is judged by its rate a tenth of a second after it crossed the floor, not by how many requests
  // the window has had time to gather.
  #rates(hitters: readonly HeavyHitter[]): Array<[string, number]> {
    const { view, fastReportFloor, clock } = this.#options
    const now = clock.now()
    const rates: Array<[string, number]> = []
    for (const { key, count } of hitters) {
      if (count < fastReportFloor || view.get(key) !== undefined || !onTheWire(key)) continue
      const mark = this.#rateMarks.get(key)
      if (mark === undefined) {
        this.#rateMarks.set(key, { count, at: now })
      } else if (now - mark.at >= MIN_RATE_SPAN_MS) {
        rates.push([key, Math.round(((count - mark.count) * 1000) / (now - mark.at))])
        mark.count = count
        mark.at = now
      }
    }
    return rates
  }

  // A key at or above the fast-report floor that the registry does not hold yet: detection is still under way.
  #warming(hitters: readonly HeavyHitter[]): boolean {
    const { view, fastReportFloor } = this.#options
    return hitters.some((h) => h.count >= fastReportFloor && view.get(h.key) === undefined)
  }

  #send(
    windowStart: number,
    windowMs: number,
    total: number,
    hitters: HeavyHitter[],
    partial: boolean,
    rates: Array<[string, number]> = [],
    error?: SketchError,
  ): boolean {
    const { connection, counters } = this.#options
    // Statistics are read (and for a final report reset) even when the report is dropped, so that a window's
    // counts never leak into the next one.
    const hotKeyStats = reportedKeyStats(this.#options, !partial, hitters)
    const watchAborts = partial ? [] : (this.#options.watchAborts?.() ?? [])
    if (this.#inFlight !== undefined || connection.status !== 'ready') {
      this.#pendingDropped++
      counters.reportsDropped++
      this.#options.events.reportDropped(this.#inFlight !== undefined ? 'busy' : 'disconnected', partial)
      return false
    }
    const dropped = this.#pendingDropped
    const text = encodeReport({
      v: WIRE_VERSION,
      kind: 'report',
      agentId: this.#options.agentId,
      seq: ++this.#seq,
      windowStart,
      windowMs,
      total,
      dropped,
      registryVersion: this.#options.view.version,
      partial,
      ...candidatesAndForms(hitters),
      ...(rates.length > 0 ? { rates } : {}),
      ...(error !== undefined ? { sketchError: error } : {}),
      ...(watchAborts.length > 0 ? { watchAborts } : {}),
      hotKeyStats,
    })
    const stream = this.#options.stream
    // One transaction, so the stream never exists without its expiry, whichever command the connection loses.
    const sent = connection
      .multi()
      .xadd(stream, 'MAXLEN', '~', REPORT_STREAM_MAXLEN, '*', STREAM_FIELD, text)
      .pexpire(stream, REPORT_STREAM_TTL_MS)
      .exec()
    this.#inFlight = failAfter(sent, this.#options.timeoutMs)
      .then(throwFailed)
      .then(
        () => {
          this.#pendingDropped -= dropped
          counters.reportsSent++
        },
        (error: unknown) => {
          this.#pendingDropped++
          counters.reportsDropped++
          this.#options.events.reportDropped('failed', partial, error as Error)
          this.#options.log.debug({ error: (error as Error).message }, 'report dropped')
        },
      )
      .finally(() => {
        this.#inFlight = undefined
      })
    return true
  }
}

// exec() resolves even when a command inside the transaction failed (its error is in the results), and with null
// when the transaction was aborted.
function throwFailed(results: [Error | null, unknown][] | null): void {
  if (results === null) throw new Error('report transaction aborted')
  for (const [error] of results) if (error !== null) throw error
}

// The report's own deadline, rather than ioredis's commandTimeout on the connection: that option gives the
// connection's commands a property the application's commands lack, and ioredis's code shared by both (writing a
// command, settling its reply) then met five shapes of Command and turned megamorphic for every request of the
// process (V8's --log-ic, a drop-in client reading 10,000 keys; no such site with this timer).
function failAfter<T>(reply: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`report timed out after ${timeoutMs} ms`)), timeoutMs)
    timer.unref()
  })
  return Promise.race([reply, late]).finally(() => clearTimeout(timer))
}
