// Longer than 300 lines: one benchmark, which builds a whole detection pipeline (consumer, ingest, detector,
// watches) by hand so that the measured path is the aggregator's own, without its HTTP and registry.
import {
  connectionOwner,
  DEFAULT_MISS_STORM,
  DEFAULT_MITIGATION_POLICY,
  Detector,
  KeyStatsStore,
  MissStormLog,
  MissStormWatch,
  missStormFloor,
  type ReceivedReport,
  RecentForms,
  ReportConsumer,
  ReportIngest,
  WindowCounters,
} from '@heatsink/aggregator'
import { startRedisCluster } from '@heatsink/devservices'
import {
  compactCandidate,
  createNames,
  encodeReport,
  type HeatsinkNames,
  STREAM_FIELD,
  WIRE_VERSION,
  type WindowReportInput,
} from '@heatsink/protocol'
import { keyNames, seededRandom, ZipfSampler } from '@heatsink/workload'
import { Cluster, Redis } from 'ioredis'
import { pino } from 'pino'
import { Counter, Histogram, Registry } from 'prom-client'
import { type MedianInterval, medianInterval } from './harness.js'
import type { ResultRow } from './results.js'
import { benchNamespace, benchRedisUrl, removeNamespace } from './support.js'

const AGENTS = 50
const REPORTS = 4000
const CANDIDATES = 100
const WINDOWS = Math.ceil(REPORTS / AGENTS)
/** Rounds of the miss-storm watch's with/without comparison (INGEST_BENCH_ROUNDS). */
const STORM_ROUNDS = Number(process.env.INGEST_BENCH_ROUNDS ?? 5)

/**
 * Report entries per second one aggregator replica ingests (an entry = one key's count in one agent's report):
 * decode, idempotent cluster-wide summing in Redis, per-key statistics, acknowledgement. Against the obvious
 * alternative in the same run: a consumer that pipelines one HINCRBY per entry, with no idempotency (a replayed
 * report would count twice) and no crossing detection.
 */
export async function benchAggregatorIngest(): Promise<ResultRow[]> {
  const url = benchRedisUrl()
  const redis = new Redis(url, { enableAutoPipelining: true })
  const namespaces: string[] = []
  let standalone: number
  let naive: number
  let missing: number
  let watched: number
  let stormRatio: MedianInterval
  try {
    const heatsinkNs = benchNamespace('ingest')
    const naiveNs = benchNamespace('naive')
    namespaces.push(heatsinkNs, naiveNs)
    standalone = await timeIngest(redis, createNames(heatsinkNs), heatsinkConsumer(1))
    naive = await timeIngest(redis, createNames(naiveNs), naiveConsumer)
    // Every entry missing (a tenth of its reads): the miss-storm watch reads each key's window sum, and judges the
    // keys past its floor; against the same reports without the watch. Rounds alternate which runs first, so a
    // machine that slows down during the run weighs on both alike; the medians are compared.
    const withoutWatch: number[] = []
    const withWatch: number[] = []
    for (let round = 0; round < STORM_ROUNDS; round++) {
      const runs = [
        async () => {
          const ns = benchNamespace('missing')
          namespaces.push(ns)
          withoutWatch.push(await timeIngest(redis, createNames(ns), heatsinkConsumer(1), true))
        },
        async () => {
          const ns = benchNamespace('watched')
          namespaces.push(ns)
          withWatch.push(await timeIngest(redis, createNames(ns), heatsinkConsumer(1, true), true))
        },
      ]
      if (round % 2 === 1) runs.reverse()
      for (const run of runs) await run()
    }
    missing = medianInterval(withoutWatch).median
    watched = medianInterval(withWatch).median
    // Throughput with / without, per round: the pairs share the machine's state of the moment.
    stormRatio = medianInterval(withoutWatch.map((ms, i) => ms / (withWatch[i] as number)))
  } finally {
    for (const ns of namespaces) await removeNamespace(redis, ns)
    await redis.quit()
  }
  // The same reports on a private 3-master Cluster, thrown away afterwards with everything written to it.
  const servers = await startRedisCluster({ masters: 3 })
  const cluster = new Cluster(servers.nodes, { enableAutoPipelining: true })
  let clustered: number
  try {
    clustered = await timeIngest(cluster, createNames(benchNamespace('ingest')), heatsinkConsumer(8))
  } finally {
    cluster.disconnect()
    await servers.stop()
  }
  const entries = REPORTS * CANDIDATES
  const rate = (ms: number) => (entries * 1000) / ms
  const figure = (ms: number) => `${Math.round(rate(ms)).toLocaleString('en')} entries/s`
  console.log(
    `aggregator-ingest: standalone ${figure(standalone)}, 3-master Cluster (8 counter shards) ${figure(clustered)}, ` +
      `naive ${figure(naive)}; every entry missing: ${figure(missing)} without the miss-storm watch, ` +
      `${figure(watched)} with it (medians of ${STORM_ROUNDS} interleaved rounds); with / without ` +
      `${stormRatio.median.toFixed(2)} (95% CI ${stormRatio.low.toFixed(2)} to ${stormRatio.high.toFixed(2)})`,
  )
  return [
    {
      benchmark: `aggregator ingest, one replica (${REPORTS} reports x ${CANDIDATES} entries, ${AGENTS} agents)`,
      heatsink: figure(standalone),
      baseline: 'naive HINCRBY consumer (no idempotency, no detection)',
      baselineFigure: figure(naive),
      ratio: rate(standalone) / rate(naive),
      note: 'throughput; above 1 is faster than the naive consumer (aim: at least 250,000 entries/s)',
    },
    {
      benchmark: 'aggregator ingest, one replica, on a 3-master Redis Cluster (8 counter shards)',
      heatsink: figure(clustered),
      baseline: 'the same replica on a standalone Redis',
      baselineFigure: figure(standalone),
      ratio: rate(clustered) / rate(standalone),
      note: 'throughput ratio, Cluster / standalone, all nodes on the same 2 cores',
    },
    {
      benchmark: 'aggregator ingest with the miss-storm watch, every entry missing (its worst case)',
      heatsink: figure(watched),
      baseline: 'the same reports without the watch',
      baselineFigure: figure(missing),
      ratio: stormRatio.median,
      note: `throughput ratio, with / without the watch: its cost on ingest (median of ${STORM_ROUNDS} interleaved rounds' ratios, 95% CI ${stormRatio.low.toFixed(2)} to ${stormRatio.high.toFixed(2)})`,
    },
  ]
}

type ConsumerFactory = (
  redis: Redis | Cluster,
  names: HeatsinkNames,
  onProcessed: (n: number) => void,
) => ReportConsumer

const log = pino({ level: 'silent' })

function metrics() {
  const registers = [new Registry()]
  return {
    claimed: new Counter({ name: 'c', help: 'h', registers }),
    deadLettered: new Counter({ name: 'd', help: 'h', labelNames: ['reason'], registers }),
    groupRecreated: new Counter({ name: 'g', help: 'h', labelNames: ['stream'], registers }),
    reports: new Counter({ name: 'r', help: 'h', registers }),
    entries: new Counter({ name: 'e', help: 'h', registers }),
    stale: new Counter({ name: 's', help: 'h', registers }),
    reportLag: new Histogram({ name: 'l', help: 'h', registers }),
  }
}

// Counter shards: 1 on a standalone Redis; on a Cluster, 8 spread each window over the masters.
const heatsinkConsumer =
  (shards: number, watchStorms = false): ConsumerFactory =>
  (redis, names, onProcessed) => {
    const m = metrics()
    const counters = new WindowCounters(redis, {
      names,
      shards,
      windowMs: 1000,
      hotRps: 10_000_000,
      retainMs: 60_000,
      ...(watchStorms ? { missFloor: missStormFloor(DEFAULT_MISS_STORM, 1000) } : {}),
    })
    const detector = new Detector({
      // The threshold is out of reach, so the registry is never asked: this measures ingest alone.
      registry: {
        promote: () => Promise.reject(new Error('unexpected promotion')),
        demote: () => Promise.resolve(false),
        list: () => Promise.resolve([]),
      },
      policy: DEFAULT_MITIGATION_POLICY,
      forms: new RecentForms(counters, 1000),
      windowMs: 1000,
      hotRps: 10_000_000,
      replicaId: 'bench',
      log,
    })
    const storms = new MissStormWatch({
      redis,
      markerKey: names.missStormMarkerKey,
      counters,
      registry: { promote: () => Promise.reject(new Error('unexpected promotion')) },
      log: new MissStormLog(redis, names.missStormsKey),
      owner: connectionOwner(redis),
      settings: DEFAULT_MISS_STORM,
      windowMs: 1000,
      replicaId: 'bench',
      now: () => Date.now(),
      raised: { inc: () => {} },
      logger: log,
    })
    const ingest = new ReportIngest({
      ...(watchStorms ? { watchers: [storms] } : {}),
      counters,
      stats: new KeyStatsStore(redis, names),
      detector,
      now: () => Date.now(),
      maxReportAgeMs: 3_600_000,
      metrics: m,
      log,
    })
    return new ReportConsumer({
      redis,
      names,
      consumer: 'bench',
      metrics: m,
      log,
      batchSize: 200,
      process: async (reports: ReceivedReport[]) => {
        await ingest.process(reports)
        onProcessed(reports.length)
      },
    })
  }

const naiveConsumer: ConsumerFactory = (redis, names, onProcessed) =>
  new ReportConsumer({
    redis,
    names,
    consumer: 'bench',
    metrics: metrics(),
    log,
    batchSize: 200,
    process: async (reports: ReceivedReport[]) => {
      const pipeline = (redis as Redis).pipeline()
      for (const { report } of reports) {
        const hash = `${names.namespace}:naive:${report.windowStart}`
        for (const c of report.candidates) pipeline.hincrby(hash, c.key, c.count)
      }
      await pipeline.exec()
      onProcessed(reports.length)
    },
  })

async function timeIngest(
  redis: Redis | Cluster,
  names: HeatsinkNames,
  factory: ConsumerFactory,
  missing = false,
): Promise<number> {
  await fill(redis, names, missing)
  let processed = 0
  let done: () => void = () => {}
  const finished = new Promise<void>((resolve) => {
    done = resolve
  })
  const consumer = factory(redis, names, (n) => {
    processed += n
    if (processed >= REPORTS) done()
  })
  const start = performance.now()
  await consumer.start()
  await finished
  const elapsed = performance.now() - start
  await consumer.stop()
  return elapsed
}

// Reports as 50 agents would send them in one window: Zipf-distributed keys, so agents report the same hot keys.
async function fill(redis: Redis | Cluster, names: HeatsinkNames, missing: boolean): Promise<void> {
  const random = seededRandom(5)
  const keys = keyNames(100_000)
  const zipf = new ZipfSampler(keys.length, 1.1, random)
  const windowStart = Math.floor(Date.now() / 1000) * 1000
  // Streams spread over a Cluster's slots: one command each, autopipelined, rather than one pipeline.
  let batch: Array<Promise<unknown>> = []
  for (let i = 0; i < REPORTS; i++) {
    const agentId = `agent-${i % AGENTS}`
    const chosen = new Map<string, number>()
    while (chosen.size < CANDIDATES) chosen.set(keys[zipf.next()] as string, 1 + Math.floor(random() * 500))
    const report: WindowReportInput = {
      v: WIRE_VERSION,
      kind: 'report',
      agentId,
      seq: i,
      // Oldest window first, as reports arrive: each agent's reports of one window, then the next window's.
      windowStart: windowStart - (WINDOWS - 1 - Math.floor(i / AGENTS)) * 1000,
      windowMs: 1000,
      total: 100_000,
      dropped: 0,
      partial: false,
      hotKeyStats: [],
      // As agents send them: tuples.
      candidates: [...chosen].map(([key, count]) =>
        compactCandidate(key, count, count, 0, missing ? Math.ceil(count / 10) : 0),
      ),
    }
    batch.push(redis.xadd(names.reportStreamFor(agentId), '*', STREAM_FIELD, encodeReport(report)))
    if (i % 500 === 499) {
      await Promise.all(batch)
      batch = []
    }
  }
  await Promise.all(batch)
}
