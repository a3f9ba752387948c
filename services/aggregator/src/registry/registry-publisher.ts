import { encodeSnapshot, type HeatsinkNames, signRegistryMessage, WIRE_VERSION } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import { type Clock, systemClock } from '../clock.js'
import type { Database } from '../db/database.js'
import { aggregatorScripts } from '../lua/scripts.js'
import type { Metrics } from '../metrics.js'
import { Ticker } from '../ticker.js'
import { toEntry } from './registry-record.js'
import { RegistryStore } from './registry-store.js'

/** Options of RegistryPublisher. */
export interface RegistryPublisherOptions {
  readonly redis: Redis | Cluster
  readonly names: HeatsinkNames
  readonly clock?: Clock
  readonly log?: Logger
  readonly metrics?: Metrics
  /** How often the outbox is checked besides after each change. Default 1000 ms. */
  readonly intervalMs?: number
  /**
   * Most events one flush publishes. After a long Redis outage only the newest are sent; agents notice the gap
   * and reload the snapshot, which is always current. Default 1000.
   */
  readonly maxEventsPerFlush?: number
  /**
   * When set, every event and snapshot is published with a MAC under this key, which agents configured with it
   * require. Events are signed here rather than in the outbox, so a key can be set or rotated without rewriting
   * stored events. Default: unsigned.
   */
  readonly registryKey?: string | null
}

/** What one flush found and did. */
export interface FlushResult {
  /** The registry version in Postgres when the flush read it. */
  version: number
  /** The versions this flush published, in order; empty when Redis was already up to date. */
  published: number[]
}

/**
 * Broadcasts committed registry changes (a transactional outbox): reads the events above the version Redis
 * has, with a snapshot read at the same time, and publishes them with one script that skips whatever another
 * replica published first. Runs after each change, at start, and every interval, so a change committed just
 * before a crash is published by the next flush of any replica.
 */
export class RegistryPublisher {
  readonly #db: Database
  readonly #store = new RegistryStore()
  readonly #redis: Redis | Cluster
  readonly #names: HeatsinkNames
  readonly #clock: Clock
  readonly #log: Logger | undefined
  readonly #metrics: Metrics | undefined
  readonly #maxEvents: number
  readonly #sign: (text: string) => string
  readonly #ticker: Ticker
  #inFlight: Promise<FlushResult> | undefined
  #queued: Promise<FlushResult> | undefined

  constructor(db: Database, options: RegistryPublisherOptions) {
    this.#db = db
    this.#redis = options.redis
    this.#names = options.names
    this.#clock = options.clock ?? systemClock
    this.#log = options.log
    this.#metrics = options.metrics
    this.#maxEvents = options.maxEventsPerFlush ?? 1000
    const key = options.registryKey ?? null
    this.#sign = key === null ? (text) => text : (text) => signRegistryMessage(text, key)
    this.#ticker = new Ticker('registry publish', options.intervalMs ?? 1000, () => this.flush(), options.log)
  }

  /**
   * Publishes every committed change Redis has not seen. Calls made while a flush runs share one flush that
   * starts after it, since the running one may have read the outbox before the caller's commit.
   */
  flush(): Promise<FlushResult> {
    if (this.#queued !== undefined) return this.#queued
    const previous = this.#inFlight ?? Promise.resolve()
    const next = previous
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined
        return this.#flushOnce()
      })
    this.#queued = next
    this.#inFlight = next
    return next
  }

  /** Flushes once (a failure is logged, not thrown), then keeps flushing every interval. */
  async start(): Promise<void> {
    try {
      await this.flush()
    } catch (error) {
      this.#log?.warn({ err: error }, 'initial registry publish failed; retrying every interval')
    }
    this.#ticker.start()
  }

  /** Stops the periodic flush and waits for the one in progress. */
  async stop(): Promise<void> {
    await this.#ticker.stop()
    await this.#inFlight?.catch(() => undefined)
  }

  async #flushOnce(): Promise<FlushResult> {
    const key = this.#names.registrySnapshotKey
    // Redis first, Postgres second: every version a replica publishes was committed before, so a stored version
    // above the one Postgres gives afterwards was written by someone else.
    const found = await this.#redis.hget(key, 'version')
    const stored = await this.#store.snapshot(this.#db)
    const snapshot = () =>
      this.#sign(
        encodeSnapshot({
          v: WIRE_VERSION,
          kind: 'snapshot',
          version: stored.version,
          at: this.#clock.now(),
          entries: stored.records.map(toEntry),
        }),
      )
    const inRedis = found === null ? 0 : /^\d{1,15}$/.test(found) ? Number(found) : Number.NaN
    if (!(inRedis <= stored.version)) {
      // A garbled or forged version would otherwise stop every publish for good (none is ever "newer"). Agents
      // that fell behind meanwhile see the repaired version ahead of theirs and reload the snapshot.
      await this.#repair(found as string, stored.version, snapshot())
      return { version: stored.version, published: [] }
    }
    if (stored.version === inRedis) return { version: stored.version, published: [] }

    // Versions are taken under a row lock held to commit, so a snapshot at version N sees every event up to N:
    // reading the events up to the snapshot's version afterwards leaves no gap between them.
    const events = await this.#store.eventsToPublish(this.#db, inRedis, stored.version, this.#maxEvents)
    const pairs = events.flatMap((event) => [event.version, this.#sign(event.payload)])
    const result = await aggregatorScripts.publishRegistry(
      this.#redis,
      key,
      stored.version,
      snapshot(),
      this.#names.registryChannel,
      pairs,
    )
    const published = result.map(Number)
    const at = this.#clock.now()
    const byVersion = new Map(events.map((event) => [event.version, event]))
    for (const version of published) {
      const event = byVersion.get(version)
      if (event === undefined) continue
      this.#metrics?.registryEventsPublished.inc({ type: event.type })
      if (event.type === 'promote' && event.onsetAt !== null) {
        this.#metrics?.detectionLatency.observe(Math.max(0, at - event.onsetAt) / 1000)
      }
    }
    if (published.length > 0) this.#log?.debug({ versions: published }, 'registry events published')
    return { version: stored.version, published }
  }

  async #repair(found: string, version: number, snapshot: string): Promise<void> {
    const key = this.#names.registrySnapshotKey
    const replaced = await aggregatorScripts.repairRegistrySnapshot(
      this.#redis,
      key,
      found,
      version,
      snapshot,
    )
    if (replaced !== 1) return
    this.#metrics?.registrySnapshotRepaired.inc()
    this.#log?.warn(
      { found: found.slice(0, 64), version },
      'registry snapshot hash held a version no replica wrote; replaced with the registry from Postgres',
    )
  }
}
