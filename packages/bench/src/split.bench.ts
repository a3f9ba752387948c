import { hrtime } from 'node:process'
import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { createSplitter, type Splitter } from '@heatsink/split'
import { Cluster, Redis } from 'ioredis'
import { percentile } from './harness.js'
import type { ResultRow } from './results.js'

const N = 8
const WARMUP = 300
const SAMPLES = 5000

interface Latency {
  p50: number
  p99: number
}

/**
 * Key splitting (@heatsink/split):
 * - the latency of reading a split counter (base key + 8 shards, fanned out in parallel, one round trip per
 *   node) against a single GET of one key, on a standalone Redis and on a 3-master Redis Cluster, measured in the
 *   same run, one request at a time, the two interleaved so that they share the machine's conditions;
 * - on the Cluster, the hottest master's share of a write-hot counter's commands, unsplit (plain INCR and GET)
 *   and split over 8 shards, counted on each master with MONITOR.
 */
export async function benchSplit(): Promise<ResultRow[]> {
  const rows: ResultRow[] = []
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
  const standalone = new Redis(url)
  try {
    rows.push(await latencyRow('standalone Redis', standalone, `hs-bench-${process.pid}`))
  } finally {
    standalone.disconnect()
  }
  const servers = await startRedisCluster({ masters: 3 })
  const clients: Array<Redis | Cluster> = []
  try {
    const cluster = await connect(servers, clients)
    rows.push(await latencyRow('3-master Cluster', cluster, `hs-bench-${process.pid}`))
    rows.push(...(await hotNodeRows(servers, clients)))
  } finally {
    for (const client of clients) client.disconnect()
    await servers.stop()
  }
  return rows
}

async function latencyRow(where: string, redis: Redis | Cluster, namespace: string): Promise<ResultRow> {
  const names = createNames(namespace)
  const splitter = createSplitter({ redis, names, agentId: 'bench' })
  const split = `${namespace}:split-counter`
  const plain = `${namespace}:plain-counter`
  await redis.set(split, '1000')
  await redis.set(plain, '1000')
  for (let i = 0; i < 64; i++) await splitter.add(split, N, 1)
  const splitTimes: number[] = []
  const getTimes: number[] = []
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const getTime = await time(() => redis.get(plain))
    const splitTime = await time(() => splitter.get(split, N))
    if (i >= WARMUP) {
      getTimes.push(getTime)
      splitTimes.push(splitTime)
    }
  }
  // Nothing was drained, so these are all the keys the run wrote; one per DEL, as they sit in different slots.
  const shards = splitter.layout(split, N).shards.flatMap((shard) => [shard.data, shard.gate])
  for (const name of [split, plain, ...shards]) await redis.del(name)
  const splitLatency = summarize(splitTimes)
  const getLatency = summarize(getTimes)
  return {
    benchmark: `split counter read, N=${N} (${where})`,
    heatsink: `p50 ${us(splitLatency.p50)}, p99 ${us(splitLatency.p99)}`,
    baseline: 'GET of one key',
    baselineFigure: `p50 ${us(getLatency.p50)}, p99 ${us(getLatency.p99)}`,
    ratio: splitLatency.p50 / getLatency.p50,
    note: `p50 latency, split / GET (aim <= 1.3x); p99 ratio ${(splitLatency.p99 / getLatency.p99).toFixed(2)}x`,
  }
}

// A write-hot counter: 4 agents, 40,000 increments and 2,000 reads, unsplit and then split over 8 shards.
async function hotNodeRows(servers: RedisCluster, clients: Array<Redis | Cluster>): Promise<ResultRow[]> {
  const namespace = `hs-bench-${process.pid}`
  const names = createNames(namespace)
  const agents: Array<{ client: Cluster; splitter: Splitter }> = []
  for (const id of ['a', 'b', 'c', 'd']) {
    const client = await connect(servers, clients)
    agents.push({ client, splitter: createSplitter({ redis: client, names, agentId: id }) })
  }
  const counters = await Promise.all(servers.nodes.map((node) => CommandCounter.start(node, clients)))
  const key = `${namespace}:hot-likes`
  const writes = 40_000
  const reads = 2_000
  const run = async (write: (agent: (typeof agents)[number]) => Promise<unknown>, read: typeof write) => {
    for (const counter of counters) counter.reset()
    await Promise.all(
      agents.map(async (agent) => {
        const worker = async (w: number) => {
          for (let i = w; i < writes / agents.length; i += 50) {
            await write(agent)
            if (i % (writes / reads) === 0) await read(agent)
          }
        }
        await Promise.all(Array.from({ length: 50 }, (_, w) => worker(w)))
      }),
    )
    return Promise.all(counters.map((counter) => counter.settle()))
  }
  const unsplit = await run(
    ({ client }) => client.incr(key),
    ({ client }) => client.get(key),
  )
  const split = await run(
    ({ splitter }) => splitter.add(key, N, 1),
    ({ splitter }) => splitter.get(key, N),
  )
  const value = await agents[0]!.splitter.get(key, N)
  if (value !== String(2 * writes)) throw new Error(`split counter read ${value}, expected ${2 * writes}`)
  const share = (counts: number[]) => Math.max(...counts) / counts.reduce((sum, count) => sum + count, 0)
  const spread = (counts: number[]) => counts.map((count) => count.toLocaleString('en-US')).join(' / ')
  return [
    {
      benchmark: `hottest master's share of a hot counter's commands (3 masters, ${writes / 1000}k INCR + ${reads / 1000}k GET)`,
      heatsink: `${pct(share(split))} split over ${N} shards (${spread(split)})`,
      baseline: 'unsplit key',
      baselineFigure: `${pct(share(unsplit))} (${spread(unsplit)})`,
      ratio: share(split) / share(unsplit),
      note: 'hottest master share, split / unsplit; ideal 1/3 = 0.33x',
    },
  ]
}

/**
 * Counts the commands clients send one master, through MONITOR: commands a Lua script runs are reported with
 * source 'lua' and left out, so a script counts once, as the one request it is.
 */
class CommandCounter {
  #count = 0
  #marker: { text: string; seen: () => void } | undefined
  readonly #client: Redis

  private constructor(client: Redis) {
    this.#client = client
  }

  static async start(
    node: { host: string; port: number },
    clients: Array<Redis | Cluster>,
  ): Promise<CommandCounter> {
    const client = new Redis({ host: node.host, port: node.port })
    clients.push(client)
    const counter = new CommandCounter(client)
    const monitor = await client.monitor()
    clients.push(monitor)
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      const command = args[0]?.toLowerCase()
      const marker = counter.#marker
      if (command === 'echo' && marker !== undefined && args[1] === marker.text) marker.seen()
      else if (source !== 'lua' && command !== 'echo' && command !== 'cluster' && command !== 'info')
        counter.#count++
    })
    return counter
  }

  reset(): void {
    this.#count = 0
  }

  // MONITOR output trails the commands: wait for a marker sent after them.
  async settle(): Promise<number> {
    const text = `settle-${Math.random()}`
    const seen = new Promise<void>((resolve) => {
      this.#marker = { text, seen: resolve }
    })
    await this.#client.echo(text)
    await seen
    return this.#count
  }
}

async function connect(servers: RedisCluster, clients: Array<Redis | Cluster>): Promise<Cluster> {
  const client = new Cluster(servers.nodes)
  clients.push(client)
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve)
    client.once('error', reject)
  })
  return client
}

async function time(operation: () => Promise<unknown>): Promise<number> {
  const start = hrtime.bigint()
  await operation()
  return Number(hrtime.bigint() - start)
}

function summarize(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}

function us(ns: number): string {
  return `${(ns / 1000).toFixed(0)} µs`
}

function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`
}
