import { hrtime } from 'node:process'
import { Cluster as HeatsinkCluster, Redis as HeatsinkRedis } from '@heatsink/agent'
import { publishRegistry } from '@heatsink/agent/testing'
import { startRedisCluster } from '@heatsink/devservices'
import { createNames, type HeatsinkNames, redisClusterSlot } from '@heatsink/protocol'
import { createSplitter, type Splitter } from '@heatsink/split'
import { seededRandom } from '@heatsink/workload'
import { Cluster, Redis } from 'ioredis'
import { percentile } from './harness.js'
import type { ResultRow } from './results.js'
import { benchNamespace, benchRedisUrl, removeNamespace, shuffle, until } from './support.js'

const N = 8
const INCREMENTS = 64
const WARMUP = 300
const SAMPLES = Number(process.env.FRONT_DOOR_SPLIT_READ_SAMPLES ?? 5000)
// After a promotion, writes stay on the base key for 2 s while it reaches every agent (split-strategy.ts).
const ACTIVATION_MS = 2100

interface Latency {
  p50: number
  p99: number
}

/** The clients of one deployment: Heatsink's, a plain ioredis one, and the one that registers the key. */
interface Deployment {
  where: string
  heatsink: HeatsinkRedis | HeatsinkCluster
  plain: Redis | Cluster
  namespace: string
}

/**
 * A split counter read through the ioredis front door: `await redis.get(key)` on a key registered `split` with
 * N = 8 (its INCRs through the same client spread over the shards), which Heatsink answers with the sum of the
 * base key and every shard, against a plain GET of a one-key counter on raw ioredis. On a standalone Redis and
 * on a private 3-master Redis Cluster, one request at a time, the reads interleaved in a random order so that
 * they share the machine's conditions. A GET of the one-key counter through the Heatsink client (a pass-through
 * read) is measured in the same rounds and printed beside.
 */
export async function benchFrontDoorSplitRead(): Promise<ResultRow[]> {
  const rows: ResultRow[] = []
  const url = benchRedisUrl()
  const namespace = benchNamespace('front-door-split-read')
  const heatsink = new HeatsinkRedis(url, { heatsink: { namespace, agentId: 'bench-front-door-split-read' } })
  const plain = new Redis(url)
  try {
    rows.push(await latencyRow({ where: 'standalone Redis', heatsink, plain, namespace }))
  } finally {
    // Closing Heatsink first waits for the process agent to close (its last report included) before cleanup.
    await heatsink.heatsink.close()
    await heatsink.quit().catch(() => {})
    await removeNamespace(plain, namespace)
    plain.disconnect()
  }
  // A private cluster, stopped afterwards with everything written to it.
  const servers = await startRedisCluster({ masters: 3 })
  const clients: Array<Redis | Cluster> = []
  let heatsinkCluster: HeatsinkCluster | undefined
  try {
    const clusterNamespace = benchNamespace('front-door-split-read')
    const plainCluster = await ready(new Cluster(servers.nodes), clients)
    heatsinkCluster = await ready(
      new HeatsinkCluster(servers.nodes, {
        heatsink: { namespace: clusterNamespace, agentId: 'bench-front-door-split-read' },
      }),
      clients,
    )
    rows.push(
      await latencyRow({
        where: '3-master Cluster',
        heatsink: heatsinkCluster,
        plain: plainCluster,
        namespace: clusterNamespace,
      }),
    )
  } finally {
    await heatsinkCluster?.heatsink.close()
    await Promise.all(clients.map((client) => client.quit().catch(() => {})))
    await servers.stop()
  }
  return rows
}

async function latencyRow({ where, heatsink, plain, namespace }: Deployment): Promise<ResultRow> {
  const split = `${namespace}:split-counter`
  const single = `${namespace}:plain-counter`
  const names = createNames(namespace)
  await plain.set(split, '1000')
  await plain.set(single, '1000')
  await heatsink.heatsink.ready()
  await publishRegistry(plain, names, { key: split, mitigation: 'split', splitFactor: N })
  await until(() => heatsink.heatsink.mitigation(split) === 'split', 'the split registration')
  await new Promise((resolve) => setTimeout(resolve, ACTIVATION_MS))
  for (let i = 0; i < INCREMENTS; i++) await heatsink.incr(split)
  const total = String(1000 + INCREMENTS)
  const base = Number(await plain.get(split))
  if (base >= 1000 + INCREMENTS) throw new Error(`no increment reached a shard of ${split} (${where})`)

  // The splitter itself on the plain client (what split.bench.ts measures): the front door's own share.
  const splitter = createSplitter({ redis: plain, names, agentId: 'bench-front-door-split-read-direct' })
  const floor = await floorRead(plain, names, splitter, split, namespace)
  const reads = [
    { name: 'split' as const, read: () => heatsink.get(split), expect: total },
    { name: 'floor' as const, read: floor.read, expect: undefined },
    { name: 'splitter' as const, read: () => splitter.get(split, N), expect: total },
    { name: 'get' as const, read: () => plain.get(single), expect: '1000' },
    { name: 'passThrough' as const, read: () => heatsink.get(single), expect: '1000' },
  ]
  const times = {
    split: [] as number[],
    splitter: [] as number[],
    get: [] as number[],
    passThrough: [] as number[],
    floor: [] as number[],
  }
  const random = seededRandom(SAMPLES)
  for (let i = -WARMUP; i < SAMPLES; i++) {
    shuffle(reads, random)
    for (const { name, read, expect } of reads) {
      const start = hrtime.bigint()
      const value = await read()
      const took = Number(hrtime.bigint() - start)
      if (expect !== undefined && value !== expect)
        throw new Error(`${name} read ${value}, expected ${expect} (${where})`)
      if (i >= 0) times[name].push(took)
    }
  }
  const s = summarize(times.split)
  const g = summarize(times.get)
  const p = summarize(times.passThrough)
  const d = summarize(times.splitter)
  const f = summarize(times.floor)
  console.log(
    `front-door-split-read (${where}): split counter N=${N} via Heatsink get p50 ${us(s.p50)} p99 ${us(s.p99)} | ` +
      `splitter.get on raw ioredis p50 ${us(d.p50)} p99 ${us(d.p99)} | raw ioredis GET of one key p50 ${us(g.p50)} p99 ${us(g.p99)} | same GET through the Heatsink client ` +
      `p50 ${us(p.p50)} p99 ${us(p.p99)} | ${floor.label} p50 ${us(f.p50)} (${(f.p50 / g.p50).toFixed(2)}x a GET) | p50 ratio ${(s.p50 / g.p50).toFixed(2)}x (aim <= 1.3x), ` +
      `vs the Heatsink GET ${(s.p50 / p.p50).toFixed(2)}x; ${SAMPLES} interleaved samples each ` +
      `(base key ${base} of ${total} after ${INCREMENTS} INCRs)`,
  )
  return {
    benchmark: `front door split counter read, N=${N}: await redis.get(key) (${where})`,
    heatsink: `p50 ${us(s.p50)}, p99 ${us(s.p99)}`,
    baseline: 'raw ioredis GET of a one-key counter',
    baselineFigure: `p50 ${us(g.p50)}, p99 ${us(g.p99)}`,
    ratio: s.p50 / g.p50,
    note:
      `p50 latency, split read / GET (aim <= 1.3x); p99 ratio ${(s.p99 / g.p99).toFixed(2)}x; the same GET ` +
      `through the Heatsink client: p50 ${us(p.p50)}; @heatsink/split's splitter.get alone: p50 ${us(d.p50)}; ` +
      `the floor, ${floor.label}: p50 ${us(f.p50)}, ${(f.p50 / g.p50).toFixed(2)}x a GET`,
  }
}

/**
 * What no split read can beat here, read with raw ioredis in the same rounds: on a standalone Redis, the MGET a
 * split read sends (base key, journal, routes and every shard); on a Cluster, one GET per master in parallel,
 * since a split read must reach every master holding a shard.
 */
async function floorRead(
  plain: Redis | Cluster,
  names: HeatsinkNames,
  splitter: Splitter,
  split: string,
  namespace: string,
): Promise<{ label: string; read: () => Promise<unknown> }> {
  if (!(plain instanceof Cluster)) {
    const shards = splitter.layout(split, N).shards.map((shard) => shard.data)
    const keys = [split, names.splitJournalKey(split), names.splitRoutesKey(split), ...shards]
    return { label: `raw MGET of those ${keys.length} keys`, read: () => plain.mget(...keys) }
  }
  const masters = new Set(plain.slots.map((nodes) => nodes[0]))
  const byMaster = new Map<string, string>()
  for (let i = 0; byMaster.size < masters.size; i++) {
    const key = `${namespace}:floor-${i}`
    const master = plain.slots[redisClusterSlot(key)]![0]!
    if (!byMaster.has(master)) byMaster.set(master, key)
  }
  const keys = [...byMaster.values()]
  for (const key of keys) await plain.set(key, '1')
  return {
    label: `${keys.length} raw GETs in parallel, one per master`,
    read: () => Promise.all(keys.map((key) => plain.get(key))),
  }
}

async function ready<T extends Redis | Cluster>(client: T, clients: Array<Redis | Cluster>): Promise<T> {
  clients.push(client)
  if (client.status !== 'ready') {
    await new Promise<void>((resolve, reject) => {
      client.once('ready', resolve)
      client.once('error', reject)
    })
  }
  return client
}

function summarize(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}

function us(ns: number): string {
  return `${(ns / 1000).toFixed(0)} µs`
}
