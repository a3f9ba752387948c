import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { createNames } from '@heatsink/protocol'
import { createStampedeGuard, type StampedeGuard } from '@heatsink/stampede'
import { BentoCache, bentostore } from 'bentocache'
import { redisDriver } from 'bentocache/drivers/redis'
import { Redis } from 'ioredis'
import { percentile } from './harness.js'
import type { ResultRow } from './results.js'

const AGENTS = 4
const TTL_SECONDS = 60

/** How requests arrive at the expired key. */
interface Arrival {
  name: string
  /** All at once, or spread at `perSecond` over `requests / perSecond` seconds. */
  perSecond?: number
  requests: number
  loadMs: number
  /** The key expired but is within a stale window (stale-while-revalidate / grace). */
  stale?: boolean
}

/** One way of answering a read: naive cache-aside, bentocache, Heatsink. */
interface Contender {
  name: string
  /** Puts the key in the state the scenario starts from (missing, or expired within its stale window). */
  prepare(arrival: Arrival, load: () => Promise<unknown>): Promise<void>
  read(agent: number, load: () => Promise<unknown>): Promise<unknown>
  close(): Promise<void>
}

interface Outcome {
  loads: number
  p50Ms: number
  p99Ms: number
}

const payload = {
  id: 12_345,
  name: 'Espresso machine, dual boiler',
  price: 1_249.5,
  tags: Array.from({ length: 20 }, (_, i) => `tag-${i}`),
  description: 'x'.repeat(600),
}

/**
 * A stampede: a hot key expires while it is read from four agents, and the load is slow. Counts the
 * loads each approach runs and the callers' latency, for naive cache-aside, bentocache (getOrSet on its Redis
 * L2 driver, one BentoCache per agent) and Heatsink's getOrLoad (one guard per agent).
 */
export async function benchStampede(): Promise<ResultRow[]> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
  const namespace = `bench-stampede-${randomBytes(4).toString('hex')}`
  const admin = new Redis(url)
  const arrivals: Arrival[] = [
    { name: '1,000 callers at once, 20 ms load', requests: 1_000, loadMs: 20 },
    { name: '5,000 reads/s for 2 s, 800 ms load', requests: 10_000, perSecond: 5_000, loadMs: 800 },
    {
      name: '5,000 reads/s for 2 s, 800 ms load, stale value kept',
      requests: 10_000,
      perSecond: 5_000,
      loadMs: 800,
      stale: true,
    },
  ]
  const rows: ResultRow[] = []
  try {
    for (const [index, arrival] of arrivals.entries()) {
      const prefix = `${namespace}:${index}`
      const results = new Map<string, Outcome>()
      for (const make of [naive, bento, heatsink]) {
        if (arrival.stale && make === naive) continue
        const contender = await make(url, prefix)
        try {
          results.set(contender.name, await run(contender, arrival))
        } finally {
          await contender.close()
        }
      }
      rows.push(...rowsFor(arrival, results))
    }
  } finally {
    await removeKeys(admin, namespace)
    admin.disconnect()
  }
  return rows
}

async function run(contender: Contender, arrival: Arrival): Promise<Outcome> {
  let loads = 0
  const load = async () => {
    loads++
    await sleep(arrival.loadMs)
    return payload
  }
  await contender.prepare(arrival, load)
  loads = 0
  const latencies: number[] = []
  const pending: Promise<void>[] = []
  const issue = (i: number) => {
    const started = performance.now()
    pending.push(
      contender.read(i % AGENTS, load).then(() => {
        latencies.push(performance.now() - started)
      }),
    )
  }
  if (arrival.perSecond === undefined) {
    for (let i = 0; i < arrival.requests; i++) issue(i)
  } else {
    // Open loop: requests go out on schedule whether or not earlier ones have been answered.
    const start = performance.now()
    let issued = 0
    while (issued < arrival.requests) {
      const due = Math.min(
        arrival.requests,
        Math.floor(((performance.now() - start) * arrival.perSecond) / 1000),
      )
      while (issued < due) issue(issued++)
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  await Promise.all(pending)
  latencies.sort((a, b) => a - b)
  return { loads, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) }
}

async function naive(url: string, prefix: string): Promise<Contender> {
  const clients = Array.from({ length: AGENTS }, () => new Redis(url))
  const key = `${prefix}:naive:hot`
  return {
    name: 'naive cache-aside',
    prepare: async () => {
      await clients[0]!.del(key)
    },
    read: async (agent, load) => {
      const redis = clients[agent]!
      const cached = await redis.get(key)
      if (cached !== null) return JSON.parse(cached)
      const value = await load()
      await redis.set(key, JSON.stringify(value), 'EX', TTL_SECONDS)
      return value
    },
    close: async () => {
      for (const client of clients) client.disconnect()
    },
  }
}

async function bento(url: string, prefix: string): Promise<Contender> {
  const caches = Array.from(
    { length: AGENTS },
    () =>
      new BentoCache({
        default: 'redis',
        stores: {
          redis: bentostore().useL2Layer(
            redisDriver({ connection: new Redis(url), prefix: `${prefix}:bento` }),
          ),
        },
      }),
  )
  const key = 'hot'
  return {
    name: 'bentocache',
    prepare: async (arrival, load) => {
      if (!arrival.stale) {
        await caches[0]!.delete({ key })
        return
      }
      // Expire it, keeping it for the grace period: bentocache then serves it while one factory refreshes.
      await caches[0]!.getOrSet({ key, factory: load, ttl: 100, grace: '10m' })
      await sleep(150)
    },
    read: (agent, load) =>
      caches[agent]!.getOrSet({ key, factory: load, ttl: TTL_SECONDS * 1000, grace: '10m' }),
    close: async () => {
      await Promise.all(caches.map((cache) => cache.disconnect()))
    },
  }
}

async function heatsink(url: string, prefix: string): Promise<Contender> {
  const names = createNames(prefix)
  const connections: Redis[] = []
  const connect = () => {
    const client = new Redis(url)
    connections.push(client)
    return client
  }
  const guards: StampedeGuard[] = Array.from({ length: AGENTS }, (_, i) =>
    createStampedeGuard({ redis: connect(), subscriber: connect(), names, agentId: `bench-${i}` }),
  )
  await Promise.all(guards.map((guard) => guard.ready()))
  const key = `${prefix}:heatsink:hot`
  let staleSeconds = 0
  return {
    name: 'Heatsink getOrLoad',
    prepare: async (arrival, load) => {
      staleSeconds = arrival.stale ? 600 : 0
      if (!arrival.stale) {
        await guards[0]!.del(key)
        return
      }
      await guards[0]!.getOrLoad(key, load, { ttlSeconds: 0.1, staleSeconds, jitter: 0 })
      await sleep(150)
    },
    read: (agent, load) => guards[agent]!.getOrLoad(key, load, { ttlSeconds: TTL_SECONDS, staleSeconds }),
    close: async () => {
      await Promise.all(guards.map((guard) => guard.idle()))
      await Promise.all(guards.map((guard) => guard.close()))
      for (const client of connections) client.disconnect()
    },
  }
}

function rowsFor(arrival: Arrival, results: Map<string, Outcome>): ResultRow[] {
  const ours = results.get('Heatsink getOrLoad')!
  const describe = (o: Outcome) =>
    `${o.loads} load${o.loads === 1 ? '' : 's'}, p50 ${o.p50Ms.toFixed(1)} ms, p99 ${o.p99Ms.toFixed(1)} ms`
  const rows: ResultRow[] = []
  for (const [name, theirs] of results) {
    if (theirs === ours) continue
    const label = `stampede, ${AGENTS} agents, ${arrival.name}`
    rows.push(
      {
        benchmark: `${label}: loads vs ${name}`,
        heatsink: describe(ours),
        baseline: name,
        baselineFigure: describe(theirs),
        ratio: ours.loads / theirs.loads,
        note: 'loads executed, Heatsink / baseline; lower is better',
      },
      {
        benchmark: `${label}: p99 vs ${name}`,
        heatsink: `p99 ${ours.p99Ms.toFixed(1)} ms`,
        baseline: name,
        baselineFigure: `p99 ${theirs.p99Ms.toFixed(1)} ms`,
        ratio: ours.p99Ms / theirs.p99Ms,
        note: 'caller latency p99, Heatsink / baseline; lower is better',
      },
    )
  }
  return rows
}

async function removeKeys(admin: Redis, namespace: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1_000)
    if (keys.length > 0) await admin.unlink(...keys)
    cursor = next
  } while (cursor !== '0')
}
