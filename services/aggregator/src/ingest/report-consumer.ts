import {
  type HeatsinkNames,
  keepSocketErrorsHandled,
  safeDecodeReport,
  type WindowReport,
} from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import { ensureConsumerGroup, isMissingGroup } from './consumer-group.js'
import { appendDeadLetter } from './dead-letter.js'
import { ReadProgress } from './read-progress.js'
import type { Rejection } from './report-admission.js'
import { entriesOf, messageOf, type StreamEntry } from './stream-entries.js'

/** A decoded report and where it came from. */
export interface ReceivedReport {
  stream: string
  id: string
  report: WindowReport
}

/** The counters the consumer updates. */
export interface ConsumerMetrics {
  claimed: { inc(value?: number): void }
  deadLettered: { inc(labels: { reason: string }, value?: number): void }
  /** Consumer groups this replica recreated after finding them gone, by stream. */
  groupRecreated: { inc(labels: { stream: string }, value?: number): void }
}

export interface ReportConsumerOptions {
  /** For non-blocking commands (ack, claim, dead letters). Blocking reads get their own connections. */
  redis: Redis | Cluster
  names: HeatsinkNames
  /** This replica's consumer name in the group. */
  consumer: string
  /** Applies a batch of reports; entries are acknowledged only after it resolves. */
  process: (reports: ReceivedReport[]) => Promise<void>
  metrics: ConsumerMetrics
  log: Logger
  batchSize?: number
  blockMs?: number
  /** A pending entry idle this long belongs to a replica presumed dead, and is claimed. */
  claimIdleMs?: number
  /** A read loop failing for longer than this counts as stalled (see stalls()). Default 3 x blockMs. */
  stallMs?: number
  /** Refuses well-formed reports that must not be counted; they are dead-lettered with its reason. */
  admit?: (report: WindowReport) => Rejection | undefined
  /** Milliseconds on a monotonic clock, for stall detection. Default performance.now. */
  monotonic?: () => number
}

/**
 * Reads the report streams through the shared consumer group. One blocking loop per stream, because a read over
 * several streams is a cross-slot command on a Redis Cluster. After a restart a replica first re-reads its own
 * pending entries; entries left pending by a replica that died are claimed (XAUTOCLAIM) by whichever replica
 * notices first. Because applying a report is idempotent, a report handled twice this way counts once.
 */
export class ReportConsumer {
  readonly #options: Required<Omit<ReportConsumerOptions, 'log' | 'admit'>> & { log: Logger }
  readonly #admit: ReportConsumerOptions['admit']
  readonly #readers: Array<Redis | Cluster> = []
  readonly #loops: Promise<void>[] = []
  readonly #progress: ReadProgress[] = []
  #running = false

  constructor(options: ReportConsumerOptions) {
    const { admit, ...rest } = options
    const blockMs = rest.blockMs ?? 1000
    this.#options = {
      batchSize: 100,
      blockMs,
      claimIdleMs: 5000,
      stallMs: 3 * blockMs,
      monotonic: () => performance.now(),
      ...rest,
    }
    this.#admit = admit
  }

  /** Creates the consumer group where missing and starts reading every stream. */
  async start(): Promise<void> {
    const { redis, names } = this.#options
    for (const stream of names.reportStreams) await ensureConsumerGroup(redis, stream, names.consumerGroup)
    this.#running = true
    for (const stream of names.reportStreams) {
      const reader = keepSocketErrorsHandled(redis.duplicate())
      const progress = new ReadProgress(stream)
      this.#readers.push(reader)
      this.#progress.push(progress)
      this.#loops.push(this.#readLoop(stream, reader, progress))
    }
  }

  /**
   * Why ingest is not making progress: one line per report stream whose read loop has failed without a break
   * for longer than `stallMs`, or has waited on one read for longer than `stallMs` plus its blocking time.
   * Empty while every loop makes progress (and before start()).
   */
  stalls(): string[] {
    const { stallMs, blockMs, monotonic } = this.#options
    const now = monotonic()
    return this.#progress.flatMap((progress) => progress.stall(now, stallMs, blockMs) ?? [])
  }

  /** Stops reading, lets the batches in hand finish and be acknowledged, and closes the read connections. */
  async stop(): Promise<void> {
    if (!this.#running) return
    this.#running = false
    await Promise.allSettled(this.#loops)
    await Promise.allSettled(this.#readers.map((reader) => reader.quit()))
  }

  async #readLoop(stream: string, reader: Redis | Cluster, progress: ReadProgress): Promise<void> {
    const { names, consumer, batchSize, blockMs, claimIdleMs, log, monotonic } = this.#options
    // '0' re-reads this consumer's own pending entries (after a restart); once they are done, '>' reads new ones.
    let cursor = '0'
    let lastClaim = 0
    // A run of failures is logged once when it starts and once when it ends, not on every retry; /readyz shows
    // the latest error meanwhile.
    let warned = false
    let recreatedInARow = 0
    while (this.#running) {
      progress.began(monotonic())
      try {
        const reply = await reader.xreadgroup(
          'GROUP',
          names.consumerGroup,
          consumer,
          'COUNT',
          batchSize,
          'BLOCK',
          blockMs,
          'STREAMS',
          stream,
          cursor,
        )
        const entries = entriesOf(reply)
        if (cursor !== '>') {
          if (entries.length === 0) cursor = '>'
          else cursor = entries[entries.length - 1]?.[0] ?? '>'
        }
        if (entries.length > 0) await this.#handle(stream, entries)
        if (Date.now() - lastClaim >= claimIdleMs / 2) {
          lastClaim = Date.now()
          await this.#claim(stream)
        }
        const failedForMs = progress.succeeded(monotonic())
        recreatedInARow = 0
        if (warned) log.info({ stream, failedForMs }, 'report stream readable again')
        warned = false
      } catch (error) {
        if (!this.#running) break
        progress.failed(monotonic(), error)
        if (isMissingGroup(error) && (await this.#recreateGroup(stream))) {
          // A fresh group has no entries pending for this consumer; reading from 0 finds that out at once.
          cursor = '0'
          // Straight back to reading, unless the group went missing again at once: that is not retried in a
          // tight loop.
          if (recreatedInARow++ === 0) continue
        }
        if (!warned) log.warn({ err: error, stream }, 'report stream read failed; retrying')
        warned = true
        await delay(Math.min(blockMs, 500))
      }
    }
  }

  // The stream or its group is gone (Redis lost its data, or the key was deleted, evicted or expired): without the
  // group every read fails until someone recreates it, so each replica does, for this stream only. Returns
  // false when recreating failed too; the loop then backs off and tries again.
  async #recreateGroup(stream: string): Promise<boolean> {
    const { redis, names, metrics, log } = this.#options
    try {
      const outcome = await ensureConsumerGroup(redis, stream, names.consumerGroup)
      if (outcome === 'created') {
        metrics.groupRecreated.inc({ stream })
        log.warn(
          { stream, group: names.consumerGroup },
          'report stream consumer group was missing (Redis lost its data, or the stream was deleted or expired); recreated it',
        )
      }
      return true
    } catch (error) {
      log.warn({ err: error, stream }, 'recreating the report stream consumer group failed; retrying')
      return false
    }
  }

  async #claim(stream: string): Promise<void> {
    const { redis, names, consumer, claimIdleMs, batchSize, metrics, log } = this.#options
    let start = '0-0'
    do {
      const [next, entries] = (await redis.xautoclaim(
        stream,
        names.consumerGroup,
        consumer,
        claimIdleMs,
        start,
        'COUNT',
        batchSize,
      )) as [string, StreamEntry[]]
      const live = entries.filter((entry) => entry !== null && Array.isArray(entry[1]))
      if (live.length > 0) {
        metrics.claimed.inc(live.length)
        log.info({ stream, entries: live.length }, 'claimed reports left pending by another replica')
        await this.#handle(stream, live)
      }
      start = next
    } while (start !== '0-0' && this.#running)
  }

  async #handle(stream: string, entries: StreamEntry[]): Promise<void> {
    const { redis, names, process } = this.#options
    const reports: ReceivedReport[] = []
    const rejected: Promise<unknown>[] = []
    for (const [id, fields] of entries) {
      const raw = messageOf(fields)
      if (raw === undefined) {
        rejected.push(
          this.#deadLetter(stream, id, 'E_MISSING_FIELD', 'entry has no message field', fields.join(' ')),
        )
        continue
      }
      const decoded = safeDecodeReport(raw)
      if (!decoded.ok) {
        rejected.push(this.#deadLetter(stream, id, decoded.error.code, decoded.error.message, raw))
        continue
      }
      const refused = this.#admit?.(decoded.value)
      if (refused === undefined) reports.push({ stream, id, report: decoded.value })
      else rejected.push(this.#deadLetter(stream, id, refused.reason, refused.message, raw))
    }
    await Promise.all(rejected)
    if (reports.length > 0) await process(reports)
    await redis.xack(stream, names.consumerGroup, ...entries.map(([id]) => id))
  }

  async #deadLetter(stream: string, id: string, reason: string, message: string, raw: string): Promise<void> {
    const { redis, names, metrics, log } = this.#options
    metrics.deadLettered.inc({ reason })
    log.warn({ stream, id, reason, message }, 'report set aside in the dead-letter stream')
    await appendDeadLetter(redis, names.deadLetterStream, { stream, id, reason, message, raw })
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
