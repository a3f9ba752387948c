import { type HeatsinkNames, safeDecodeReport, type WindowReport } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
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
}

const DEAD_LETTER_MAXLEN = 10_000
const MAX_DEAD_LETTER_RAW = 16_384

/**
 * Reads the report streams through the shared consumer group. One blocking loop per stream, because a read over
 * several streams is a cross-slot command on a Redis Cluster. After a restart a replica first re-reads its own
 * pending entries; entries left pending by a replica that died are claimed (XAUTOCLAIM) by whichever replica
 * notices first. Because applying a report is idempotent, a report handled twice this way counts once.
 */
export class ReportConsumer {
  readonly #options: Required<Omit<ReportConsumerOptions, 'log'>> & { log: Logger }
  readonly #readers: Array<Redis | Cluster> = []
  readonly #loops: Promise<void>[] = []
  #running = false

  constructor(options: ReportConsumerOptions) {
    this.#options = { batchSize: 100, blockMs: 1000, claimIdleMs: 5000, ...options }
  }

  /** Creates the consumer group where missing and starts reading every stream. */
  async start(): Promise<void> {
    const { redis, names } = this.#options
    for (const stream of names.reportStreams) {
      try {
        // From 0, not $: reports written before the first replica started are still read (stale ones are
        // recognised by their window and skipped later).
        await redis.xgroup('CREATE', stream, names.consumerGroup, '0', 'MKSTREAM')
      } catch (error) {
        if (!(error instanceof Error && error.message.includes('BUSYGROUP'))) throw error
      }
    }
    this.#running = true
    for (const stream of names.reportStreams) {
      const reader = redis.duplicate()
      this.#readers.push(reader)
      this.#loops.push(this.#readLoop(stream, reader))
    }
  }

  /** Stops reading, lets the batches in hand finish and be acknowledged, and closes the read connections. */
  async stop(): Promise<void> {
    if (!this.#running) return
    this.#running = false
    await Promise.allSettled(this.#loops)
    await Promise.allSettled(this.#readers.map((reader) => reader.quit()))
  }

  async #readLoop(stream: string, reader: Redis | Cluster): Promise<void> {
    const { names, consumer, batchSize, blockMs, claimIdleMs, log } = this.#options
    // '0' re-reads this consumer's own pending entries (after a restart); once they are done, '>' reads new ones.
    let cursor = '0'
    let lastClaim = 0
    while (this.#running) {
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
      } catch (error) {
        if (!this.#running) break
        log.warn({ err: error, stream }, 'report stream read failed; retrying')
        await delay(Math.min(blockMs, 500))
      }
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
      if (decoded.ok) reports.push({ stream, id, report: decoded.value })
      else rejected.push(this.#deadLetter(stream, id, decoded.error.code, decoded.error.message, raw))
    }
    await Promise.all(rejected)
    if (reports.length > 0) await process(reports)
    await redis.xack(stream, names.consumerGroup, ...entries.map(([id]) => id))
  }

  // Set aside, not dropped: an operator can read what was wrong and with which message.
  async #deadLetter(stream: string, id: string, reason: string, message: string, raw: string): Promise<void> {
    const { redis, names, metrics, log } = this.#options
    metrics.deadLettered.inc({ reason })
    log.warn({ stream, id, reason, message }, 'report set aside in the dead-letter stream')
    await redis.xadd(
      names.deadLetterStream,
      'MAXLEN',
      '~',
      DEAD_LETTER_MAXLEN,
      '*',
      'stream',
      stream,
      'id',
      id,
      'reason',
      reason,
      'message',
      message,
      'raw',
      raw.slice(0, MAX_DEAD_LETTER_RAW),
    )
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
