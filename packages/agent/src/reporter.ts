import {
  type CompactCandidate,
  compactCandidate,
  encodeReport,
  type HotKeyStats,
  MAX_HOT_KEY_STATS,
  MAX_KEY_BYTES,
  MAX_SKETCH_SAMPLES,
  type SketchError,
  STREAM_FIELD,
  WIRE_VERSION,
  type WindowReportInput,
} from '@heatsink/protocol'
import type { Clock, HeavyHitter, WindowRecorder, WindowSummary } from '@heatsink/sketch'
import type { KeyStats } from '@heatsink/stampede'
import type { Cluster, Redis } from 'ioredis'
import type { AgentEvents } from './events/agent-events.js'
import type { AgentLogger } from './options.js'
import type { HotKey, RegistryView } from './registry-view.js'
import type { AgentCounters } from './stats.js'

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

/** getOrLoad's per-key counters (the stampede guard's). */
export interface LoadStats {
  /** A key's counters in the open window. */
  keyStats(key: string): KeyStats | undefined
  /** Every key's counters for the window now ending; the next starts at zero. */
  takeWindowStats(): Map<string, KeyStats>
}

/** What a Reporter needs. */
export interface ReporterOptions {
  /** A connection of the reporter's own, without offline queue: a report that cannot go now fails at once. */
  connection: Redis | Cluster
  stream: string
  agentId: string
  recorder: WindowRecorder
  windowMs: number
  view: RegistryView
  loads: LoadStats
  /** Writes per shard of each split key since the last call (and reset by it). */
  shardCounts: () => Map<string, number[]>
  counters: AgentCounters
  /** Told of each report dropped, and why. */
  events: AgentEvents
  maxPartialsPerWindow: number
  /** The fast-report floor: a key at or above it in the open window, not yet registered, keeps partials going. */
  fastReportFloor: number
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
    const hotKeyStats = this.#hotKeyStats(!partial, hitters)
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
      hotKeyStats,
    })
    const stream = this.#options.stream
    // One transaction, so the stream never exists without its expiry, whichever command the connection loses.
    this.#inFlight = connection
      .multi()
      .xadd(stream, 'MAXLEN', '~', REPORT_STREAM_MAXLEN, '*', STREAM_FIELD, text)
      .pexpire(stream, REPORT_STREAM_TTL_MS)
      .exec()
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

  // Every registered key this agent did something for, with getOrLoad's counters and coalesced plain reads (a GET
  // sent is the coalesce mitigation's upstream load): a key idle here is left out, as every agent would otherwise
  // send every registered key every window, and the key's request count is in the candidates anyway (registered
  // keys are pinned). A window's final report adds the keys getOrLoad served that are among its
  // hitters, so the aggregator knows their collapse ratio too while the report stays bounded by the hitters.
  #hotKeyStats(reset: boolean, hitters: readonly HeavyHitter[]): HotKeyStatsInput[] {
    const { view, loads, shardCounts } = this.#options
    const taken = reset ? loads.takeWindowStats() : undefined
    const shards = reset ? shardCounts() : undefined
    const stats: HotKeyStatsInput[] = []
    for (const hot of view.values()) {
      if (stats.length < MAX_HOT_KEY_STATS) {
        const entry = keyStats(
          hot.key,
          taken === undefined ? loads.keyStats(hot.key) : taken.get(hot.key),
          hot,
        )
        const perShard = shards?.get(hot.key)
        if (perShard !== undefined) stats.push({ ...entry, splitShardCounts: perShard })
        else if (Object.keys(entry).length > 1) stats.push(entry)
      }
      if (reset) hot.resetWindow()
    }
    if (taken === undefined || taken.size === 0) return stats
    for (const { key, misses } of hitters) {
      if (stats.length >= MAX_HOT_KEY_STATS) break
      const counted = taken.get(key)
      if (counted !== undefined && view.get(key) === undefined && onTheWire(key)) {
        stats.push({ ...keyStats(key, counted, undefined), misses })
      }
    }
    return stats
  }
}

// exec() resolves even when a command inside the transaction failed (its error is in the results), and with null
// when the transaction was aborted.
function throwFailed(results: [Error | null, unknown][] | null): void {
  if (results === null) throw new Error('report transaction aborted')
  for (const [error] of results) if (error !== null) throw error
}

type HotKeyStatsInput = NonNullable<WindowReportInput['hotKeyStats']>[number]

// Counters left out read as 0 (the schema's default), so an idle key's entry is its name alone: every agent
// reports every registered key every window, and most of them are idle on most agents.
function keyStats(key: string, loads: KeyStats | undefined, hot: HotKey | undefined): HotKeyStatsInput {
  const counters: Omit<HotKeyStats, 'key' | 'splitShardCounts'> = {
    l1Hits: hot?.l1Hits ?? 0,
    l1Misses: hot?.l1Misses ?? 0,
    coalescedWaiters: (loads?.coalescedWaiters ?? 0) + (hot?.readsJoined ?? 0),
    upstreamLoads: (loads?.upstreamLoads ?? 0) + (hot?.readsSent ?? 0),
    staleServes: loads?.staleServes ?? 0,
    leaseWaits: loads?.leaseWaits ?? 0,
    timeouts: loads?.timeouts ?? 0,
    misses: hot?.misses ?? 0,
  }
  const entry: HotKeyStatsInput = { key }
  for (const [name, value] of Object.entries(counters)) {
    if (value !== 0) entry[name as keyof typeof counters] = value
  }
  return entry
}

// The window's error sample for the wire: the summary, and the sampled keys that matter to operators by name
// (those reported as candidates, and the registered ones), for GET /hotkeys/{key}/stats.
function sketchError(summary: WindowSummary, view: RegistryView): SketchError | undefined {
  const sample = summary.errorSample
  if (sample === undefined) return undefined
  const named = new Set(summary.hitters.map((hitter) => hitter.key))
  const keys: SketchError['keys'] = []
  for (const { key, estimate, exact } of sample.keys) {
    if (keys.length >= MAX_SKETCH_SAMPLES) break
    if ((named.has(key) || view.get(key) !== undefined) && onTheWire(key)) keys.push([key, estimate, exact])
  }
  const { sampled, meanRelativeError, maxRelativeError, bound, overBound } = sample
  return { sampled, meanRelativeError, maxRelativeError, bound, overBound, keys }
}

// The candidates, and beside them the command forms seen on each (one mask per candidate, in the same order).
function candidatesAndForms(hitters: readonly HeavyHitter[]): {
  candidates: CompactCandidate[]
  forms: number[]
} {
  const candidates: CompactCandidate[] = []
  const forms: number[] = []
  for (const { key, count, reads, writes, misses, forms: seen } of hitters) {
    if (!onTheWire(key)) continue
    candidates.push(compactCandidate(key, count, reads, writes, misses))
    forms.push(seen)
  }
  return { candidates, forms }
}

// A key the wire refuses (empty, or over MAX_KEY_BYTES) would make the aggregator refuse the whole report.
function onTheWire(key: string): boolean {
  return key.length > 0 && (key.length * 3 <= MAX_KEY_BYTES || Buffer.byteLength(key) <= MAX_KEY_BYTES)
}
