import { randomBytes } from 'node:crypto'
import { createAggregator, createPgliteDatabase, IN_MEMORY, loadConfig } from '@heatsink/aggregator'
import { ensureRedis, freePort, startRedisCluster } from '@heatsink/devservices'
import { Redis } from 'ioredis'
import { medianInterval } from './harness.js'
import { processCost } from './process-cpu.js'
import type { ResultRow } from './results.js'

const ROUNDS = Number(process.env.NODE_SAMPLING_BENCH_ROUNDS ?? 4)
const MEASURE_MS = Number(process.env.NODE_SAMPLING_BENCH_MS ?? 10_000)
// The first samples open the node connections and fill the history: left out of the measurement.
const WARMUP_MS = 3000

/** Where the measured aggregator samples: the nodes' addresses, and its REDIS_URL settings. */
interface Topology {
  label: string
  nodes: Array<{ host: string; port: number }>
  env: Record<string, string>
}

/**
 * What sampling every Redis node once a second costs: the CPU of the Redis server(s) and of the aggregator
 * replica doing it, with HEATSINK_NODE_SAMPLE_MS=1000 against 0, on a private standalone Redis and a private
 * 3-master Cluster with no other traffic. The aggregator runs in this process (on an in-memory PGlite), so its
 * CPU is this process's over the window; each Redis server's is read from /proc by its INFO process_id. On and
 * off alternate, in a rotating order, over ROUNDS rounds; the medians over rounds are reported with their
 * bootstrap 95% intervals.
 */
export async function benchNodeSampling(): Promise<ResultRow[]> {
  const standalone = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  const cluster = await startRedisCluster({ masters: 3 })
  try {
    const { hostname, port } = new URL(standalone.url)
    const topologies: Topology[] = [
      {
        label: 'standalone',
        nodes: [{ host: hostname, port: Number(port) }],
        env: { REDIS_URL: standalone.url },
      },
      {
        label: '3-master Cluster',
        nodes: cluster.nodes.map(({ host, port }) => ({ host, port })),
        env: {
          REDIS_URL: `redis://${cluster.nodes[0]?.host}:${cluster.nodes[0]?.port}`,
          HEATSINK_REDIS_CLUSTER: 'true',
        },
      },
    ]
    const rows: ResultRow[] = []
    for (const topology of topologies) rows.push(...(await measure(topology)))
    return rows
  } finally {
    await cluster.stop()
    await standalone.stop()
  }
}

async function measure(topology: Topology): Promise<ResultRow[]> {
  const pids = await Promise.all(topology.nodes.map(({ host, port }) => serverPid(host, port)))
  const redisMs: Record<'on' | 'off', number[]> = { on: [], off: [] }
  const aggregatorMs: Record<'on' | 'off', number[]> = { on: [], off: [] }
  for (let round = 0; round < ROUNDS; round++) {
    const order: Array<'on' | 'off'> = round % 2 === 0 ? ['on', 'off'] : ['off', 'on']
    for (const mode of order) {
      const { redis, aggregator } = await window(topology, pids, mode === 'on' ? 1000 : 0)
      redisMs[mode].push(redis)
      aggregatorMs[mode].push(aggregator)
    }
  }
  const per = (values: number[]) => medianInterval(values)
  const row = (what: string, on: number[], off: number[], perNode: number): ResultRow => {
    const onMedian = per(on)
    const offMedian = per(off)
    const delta = per(on.map((value, i) => value - (off[i] ?? 0)))
    return {
      benchmark: `node sampling (${topology.label}): ${what}`,
      heatsink: `${onMedian.median.toFixed(2)} ms CPU/s sampling every 1 s`,
      baseline: 'HEATSINK_NODE_SAMPLE_MS=0',
      baselineFigure: `${offMedian.median.toFixed(2)} ms CPU/s`,
      ratio: offMedian.median > 0 ? onMedian.median / offMedian.median : Number.NaN,
      note:
        `sampling adds ${delta.median.toFixed(2)} ms CPU/s (95% CI ${delta.low.toFixed(2)} to ${delta.high.toFixed(2)}), ` +
        `${(delta.median / perNode).toFixed(2)} ms per node per second; ${ROUNDS} rounds of ${MEASURE_MS / 1000} s, ` +
        'idle Redis (no other traffic); lower is better',
    }
  }
  const nodes = topology.nodes.length
  return [
    row(`Redis CPU (${nodes} node(s) summed)`, redisMs.on, redisMs.off, nodes),
    row('aggregator CPU', aggregatorMs.on, aggregatorMs.off, nodes),
  ]
}

// One aggregator replica (it holds the metrics lease alone, so it samples when sampling is on), measured over
// MEASURE_MS after a warm-up: CPU milliseconds per second of Redis (summed) and of this process.
async function window(
  topology: Topology,
  pids: number[],
  sampleMs: number,
): Promise<{ redis: number; aggregator: number }> {
  const db = createPgliteDatabase(IN_MEMORY)
  const aggregator = createAggregator(
    loadConfig({
      ...topology.env,
      HEATSINK_NAMESPACE: `bench-nodes-${randomBytes(4).toString('hex')}`,
      HEATSINK_NODE_SAMPLE_MS: String(sampleMs),
      PORT: '0',
    }),
    { db },
  )
  await aggregator.start()
  try {
    await new Promise((resolve) => setTimeout(resolve, WARMUP_MS))
    const redisBefore = pids.map((pid) => processCost(pid).cpuNs)
    const selfBefore = processCost(process.pid).cpuNs
    const started = performance.now()
    await new Promise((resolve) => setTimeout(resolve, MEASURE_MS))
    const seconds = (performance.now() - started) / 1000
    const redisNs = pids.reduce((sum, pid, i) => sum + processCost(pid).cpuNs - (redisBefore[i] ?? 0), 0)
    const selfNs = processCost(process.pid).cpuNs - selfBefore
    return { redis: redisNs / 1e6 / seconds, aggregator: selfNs / 1e6 / seconds }
  } finally {
    await aggregator.stop()
    await db.close()
  }
}

async function serverPid(host: string, port: number): Promise<number> {
  const client = new Redis(port, host)
  try {
    const info = await client.info('server')
    return Number(/^process_id:(\d+)/m.exec(info)?.[1])
  } finally {
    client.disconnect()
  }
}
