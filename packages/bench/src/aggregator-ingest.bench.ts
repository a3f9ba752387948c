import {
  DEFAULT_MITIGATION_POLICY,
  Detector,
  KeyStatsStore,
  type ReceivedReport,
  ReportConsumer,
  ReportIngest,
  WindowCounters,
} from '@heatsink/aggregator'
import {
  createNames,
  encodeReport,
  type HeatsinkNames,
  STREAM_FIELD,
  WIRE_VERSION,
  type WindowReport,
} from '@heatsink/protocol'
import { keyNames, seededRandom, ZipfSampler } from '@heatsink/workload'
import { Redis } from 'ioredis'
import { pino } from 'pino'
import { Counter, Histogram, Registry } from 'prom-client'
import type { ResultRow } from './results.js'
import { benchNamespace, benchRedisUrl, removeNamespace } from './support.js'

const AGENTS = 50
const REPORTS = 4000
const CANDIDATES = 100

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
  try {
    const heatsinkNs = benchNamespace('ingest')
    const naiveNs = benchNamespace('naive')
    namespaces.push(heatsinkNs, naiveNs)
    const heatsink = await timeIngest(redis, createNames(heatsinkNs), heatsinkConsumer)
    const naive = await timeIngest(redis, createNames(naiveNs), naiveConsumer)
    const entries = REPORTS * CANDIDATES
    const rate = (ms: number) => (entries * 1000) / ms
    return [
      {
        benchmark: `aggregator ingest, one replica (${REPORTS} reports x ${CANDIDATES} entries, ${AGENTS} agents)`,
        heatsink: `${Math.round(rate(heatsink)).toLocaleString('en')} entries/s`,
        baseline: 'naive HINCRBY consumer (no idempotency, no detection)',
        baselineFigure: `${Math.round(rate(naive)).toLocaleString('en')} entries/s`,
        ratio: rate(heatsink) / rate(naive),
        note: 'throughput; above 1 is faster than the naive consumer',
      },
    ]
  } finally {
    for (const ns of namespaces) await removeNamespace(redis, ns)
    await redis.quit()
  }
}

type ConsumerFactory = (
  redis: Redis,
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

const heatsinkConsumer: ConsumerFactory = (redis, names, onProcessed) => {
  const m = metrics()
  const counters = new WindowCounters(redis, {
    names,
    shards: 1,
    windowMs: 1000,
    hotRps: 10_000_000,
    retainMs: 60_000,
  })
  const detector = new Detector({
    // The threshold is out of reach, so the registry is never asked: this measures ingest alone.
    registry: {
      promote: () => Promise.reject(new Error('unexpected promotion')),
      demote: () => Promise.resolve(false),
      list: () => Promise.resolve([]),
    },
    policy: DEFAULT_MITIGATION_POLICY,
    windowMs: 1000,
    hotRps: 10_000_000,
    replicaId: 'bench',
    log,
  })
  const ingest = new ReportIngest({
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
      const pipeline = redis.pipeline()
      for (const { report } of reports) {
        const hash = `${names.namespace}:naive:${report.windowStart}`
        for (const c of report.candidates) pipeline.hincrby(hash, c.key, c.count)
      }
      await pipeline.exec()
      onProcessed(reports.length)
    },
  })

async function timeIngest(redis: Redis, names: HeatsinkNames, factory: ConsumerFactory): Promise<number> {
  await fill(redis, names)
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
async function fill(redis: Redis, names: HeatsinkNames): Promise<void> {
  const random = seededRandom(5)
  const keys = keyNames(100_000)
  const zipf = new ZipfSampler(keys.length, 1.1, random)
  const windowStart = Math.floor(Date.now() / 1000) * 1000
  let pipeline = redis.pipeline()
  for (let i = 0; i < REPORTS; i++) {
    const agentId = `agent-${i % AGENTS}`
    const chosen = new Map<string, number>()
    while (chosen.size < CANDIDATES) chosen.set(keys[zipf.next()] as string, 1 + Math.floor(random() * 500))
    const report: WindowReport = {
      v: WIRE_VERSION,
      kind: 'report',
      agentId,
      seq: i,
      windowStart: windowStart - Math.floor(i / AGENTS) * 1000,
      windowMs: 1000,
      total: 100_000,
      dropped: 0,
      partial: false,
      hotKeyStats: [],
      candidates: [...chosen].map(([key, count]) => ({ key, count, reads: count, writes: 0, misses: 0 })),
    }
    pipeline.xadd(names.reportStreamFor(agentId), '*', STREAM_FIELD, encodeReport(report))
    if (i % 500 === 499) {
      await pipeline.exec()
      pipeline = redis.pipeline()
    }
  }
  await pipeline.exec()
}
