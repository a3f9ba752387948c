import type { HeatsinkNames } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import { AgentDirectory } from '../agents/agent-directory.js'
import { ContentionCounters } from '../contention/contention-counters.js'
import { type ContentionSettings, WriteContention } from '../contention/write-contention.js'
import { reportAdmission } from '../ingest/report-admission.js'
import { type ConsumerMetrics, type ReceivedReport, ReportConsumer } from '../ingest/report-consumer.js'
import { ReportIngest, type ReportIngestOptions } from '../ingest/report-ingest.js'
import type { Metrics } from '../metrics.js'
import type { KeyOwner } from '../storms/key-owner.js'
import type { MissStormLog } from '../storms/miss-storm-log.js'
import { type MissStormSettings, MissStormWatch, missStormFloor } from '../storms/miss-storm-watch.js'
import { KeyStatsStore } from '../traffic/key-stats-store.js'
import { RedisTrafficReader } from '../traffic/redis-traffic-reader.js'
import { SketchErrors } from '../traffic/sketch-errors.js'
import { CooldownSweeper } from './cooldown-sweeper.js'
import { Detector } from './detector.js'
import { FleetTuner } from './fleet-tuner.js'
import type { MitigationPolicyOptions } from './mitigation-policy.js'
import { RecentForms } from './recent-forms.js'
import type { RegistryPort } from './registry-port.js'
import { SplitFormsWatch } from './split-forms-watch.js'
import { WindowCounters } from './window-counters.js'

/** Thresholds and timing of detection. */
export interface DetectionSettings {
  windowMs: number
  hotRps: number
  coolRps: number
  coolSeconds: number
  counterShards: number
  policy: MitigationPolicyOptions
  /** Reports about windows that ended longer ago than this are skipped. */
  maxReportAgeMs: number
  /** Reports about windows starting further ahead of `now` than this are refused (dead-lettered). */
  maxClockSkewMs: number
  /** A report stream read loop failing for longer than this makes checkIngest() throw. */
  ingestStallMs: number
  /** When a key's misses are a storm. */
  missStorm: MissStormSettings
  /** When a key's write contention is sustained. */
  contention: ContentionSettings
}

export interface DetectionEngineOptions {
  redis: Redis | Cluster
  names: HeatsinkNames
  registry: RegistryPort
  settings: DetectionSettings
  replicaId: string
  now: () => number
  /** Signs the detection tuning published to agents (HEATSINK_REGISTRY_KEY). */
  registryKey?: string | null
  /** Where miss storms are logged, and who owns a key; without them no storm is watched for. */
  missStorms?: { log: MissStormLog; owner: KeyOwner }
  log: Logger
  metrics: ConsumerMetrics &
    ReportIngestOptions['metrics'] &
    Pick<
      Metrics,
      | 'promotionsAbandoned'
      | 'sketchSampledKeys'
      | 'sketchOverBound'
      | 'sketchMeanRelativeError'
      | 'sketchMaxRelativeError'
      | 'missStorms'
      | 'reportFieldsSetAside'
    >
}

/**
 * Everything one replica does to detect hot keys: read reports, sum them cluster-wide, promote on crossing,
 * demote after cooling down. Stateless apart from caches: any number of replicas run it side by side. When a key
 * turns hot is hot-key-rule.ts's (with applyReport-1.lua and applyRates-1.lua beside it); this wires the parts.
 */
export class DetectionEngine {
  readonly counters: WindowCounters
  readonly fleet: FleetTuner
  readonly traffic: RedisTrafficReader
  readonly detector: Detector
  /** Each agent's latest statistics per registered key, for GET /hotkeys/{key}/agents. */
  readonly keyStats: KeyStatsStore
  /** The agents whose reports arrive, for GET /agents and the dashboard. */
  readonly agents: AgentDirectory
  /** Transactions aborted by WATCH per key, for GET /hotkeys/{key}/stats. */
  readonly contention: WriteContention
  readonly #consumer: ReportConsumer
  readonly #sweeper: CooldownSweeper
  readonly #options: DetectionEngineOptions
  readonly #timers: NodeJS.Timeout[] = []
  readonly #running = new Set<Promise<void>>()

  constructor(options: DetectionEngineOptions) {
    const { redis, names, registry, settings, replicaId, now, log, metrics } = options
    this.#options = options
    // Reports arrive within a few hundred milliseconds of their window's end; reading a window earlier would
    // judge it on part of its reports.
    const graceMs = Math.max(500, settings.windowMs / 2)
    this.counters = new WindowCounters(redis, {
      names,
      shards: settings.counterShards,
      windowMs: settings.windowMs,
      hotRps: settings.hotRps,
      retainMs: Math.max(60_000, settings.coolSeconds * 1000 + 10 * settings.windowMs),
      ...(options.missStorms === undefined
        ? {}
        : { missFloor: missStormFloor(settings.missStorm, settings.windowMs) }),
    })
    const stats = new KeyStatsStore(redis, names)
    const sketchErrors = new SketchErrors(redis, names, {
      sampledKeys: metrics.sketchSampledKeys,
      overBound: metrics.sketchOverBound,
      meanRelativeError: metrics.sketchMeanRelativeError,
      maxRelativeError: metrics.sketchMaxRelativeError,
    })
    this.keyStats = stats
    const forms = new RecentForms(this.counters, settings.windowMs)
    this.traffic = new RedisTrafficReader({
      counters: this.counters,
      stats,
      sketchErrors,
      forms,
      now,
      windowMs: settings.windowMs,
      graceMs,
    })
    this.detector = new Detector({
      registry,
      policy: settings.policy,
      forms,
      windowMs: settings.windowMs,
      hotRps: settings.hotRps,
      replicaId,
      log,
      abandoned: metrics.promotionsAbandoned,
    })
    this.fleet = new FleetTuner({
      redis,
      names,
      counters: this.counters,
      windowMs: settings.windowMs,
      now,
      registryKey: options.registryKey ?? null,
    })
    const storms =
      options.missStorms === undefined
        ? undefined
        : new MissStormWatch({
            redis,
            markerKey: names.missStormMarkerKey,
            counters: this.counters,
            registry,
            log: options.missStorms.log,
            owner: options.missStorms.owner,
            settings: settings.missStorm,
            windowMs: settings.windowMs,
            replicaId,
            now,
            raised: metrics.missStorms,
            logger: log,
          })
    this.contention = new WriteContention({
      counters: new ContentionCounters(redis, {
        names,
        shards: settings.counterShards,
        retainMs: Math.max(60_000, settings.coolSeconds * 1000 + 10 * settings.windowMs),
      }),
      settings: settings.contention,
      windowMs: settings.windowMs,
      latestCompleteWindow: () => this.traffic.latestCompleteWindow(),
      setAside: { inc: () => metrics.reportFieldsSetAside.inc({ field: 'watchAborts' }) },
      log,
    })
    const ingest = new ReportIngest({
      watchers: storms === undefined ? [this.contention] : [storms, this.contention],
      counters: this.counters,
      stats,
      sketchErrors,
      detector: this.detector,
      fleet: this.fleet,
      now,
      maxReportAgeMs: settings.maxReportAgeMs,
      metrics,
      log,
    })
    this.agents = new AgentDirectory(redis, names, settings.windowMs, now, log)
    const process = async (batch: ReceivedReport[]) => {
      await Promise.all([ingest.process(batch), this.agents.record(batch.map((received) => received.report))])
    }
    this.#consumer = new ReportConsumer({
      redis,
      names,
      consumer: replicaId,
      process,
      admit: reportAdmission({ windowMs: settings.windowMs, maxClockSkewMs: settings.maxClockSkewMs, now }),
      stallMs: settings.ingestStallMs,
      metrics,
      log,
    })
    this.#sweeper = new CooldownSweeper({
      registry,
      counters: this.counters,
      detector: this.detector,
      now,
      windowMs: settings.windowMs,
      coolRps: settings.coolRps,
      coolSeconds: settings.coolSeconds,
      graceMs,
      replicaId,
      splitForms: new SplitFormsWatch({
        registry,
        forms,
        detector: this.detector,
        now,
        replicaId,
        log,
      }),
      log,
    })
  }

  /** Starts reading reports, and the cool-down and retry loops. */
  async start(): Promise<void> {
    await this.#sweeper.sweep()
    await this.#consumer.start()
    this.#every(this.#options.settings.windowMs, () => this.#sweeper.sweep())
    this.#every(this.#options.settings.windowMs, () => this.fleet.tick())
    this.#every(1000, () => this.detector.retryPending())
  }

  /** For /readyz: throws, naming the streams, when a report stream's read loop is not making progress. */
  checkIngest(): void {
    const stalls = this.#consumer.stalls()
    if (stalls.length > 0) throw new Error(stalls.join('; '))
  }

  /** Stops the loops, finishes the batch in hand, and stops reading. */
  async stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer)
    this.#timers.length = 0
    await Promise.allSettled(this.#running)
    await this.#consumer.stop()
  }

  // A pass still running when the next is due is not overlapped: the next tick is skipped instead.
  #every(ms: number, task: () => Promise<void>): void {
    let busy = false
    const timer = setInterval(() => {
      if (busy) return
      busy = true
      const run = task()
        .catch((error: unknown) => this.#options.log.error({ err: error }, 'detection task failed'))
        .finally(() => {
          busy = false
          this.#running.delete(run)
        })
      this.#running.add(run)
    }, ms)
    timer.unref()
    this.#timers.push(timer)
  }
}

/** The replica's metrics the detection engine updates. */
export function detectionMetrics(metrics: Metrics): DetectionEngineOptions['metrics'] {
  return {
    claimed: metrics.ingestClaimed,
    deadLettered: metrics.deadLetters,
    groupRecreated: metrics.ingestGroupRecreated,
    reports: metrics.ingestReports,
    entries: metrics.ingestEntries,
    stale: metrics.ingestStale,
    reportLag: metrics.reportLag,
    promotionsAbandoned: metrics.promotionsAbandoned,
    sketchSampledKeys: metrics.sketchSampledKeys,
    sketchOverBound: metrics.sketchOverBound,
    sketchMeanRelativeError: metrics.sketchMeanRelativeError,
    sketchMaxRelativeError: metrics.sketchMaxRelativeError,
    missStorms: metrics.missStorms,
    reportFieldsSetAside: metrics.reportFieldsSetAside,
  }
}
