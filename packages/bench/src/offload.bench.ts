import { type Agent, createAgent, DEFAULT_MAX_TTL_MS, DEFAULT_TTL_FRACTION } from '@heatsink/agent'
import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import type { ResultRow } from './results.js'
import { benchNamespace, benchRedisUrl, removeNamespace, until, watchGets } from './support.js'

const AGENTS = 4
const READS_PER_SECOND = 5000
const SECONDS = 10
const KEY_TTL_SECONDS = 3600
const TICK_MS = 10

/**
 * Offload: four agents each read one local_cache key 5,000 times a second for 10 s. Redis' INFO commandstats
 * (cmdstat_get) before and after gives the reads that reached Redis; everything else L1 absorbed. The promise
 * is at most one read per agent per L1 lifetime (the key's TTL x ttlFraction, capped). commandstats counts the
 * whole server's GETs, so anything else reading meanwhile inflates it; MONITOR counts the GETs of this key
 * alone, and that exact count is the figure judged (both are printed).
 */
export async function benchOffload(): Promise<ResultRow[]> {
  const url = benchRedisUrl()
  const namespace = benchNamespace('offload')
  const names = createNames(namespace)
  const admin = new Redis(url)
  const key = `${namespace}:flash-sale`
  const agents: Agent<Redis>[] = []
  try {
    await admin.set(key, 'the price of everything', 'EX', KEY_TTL_SECONDS)
    for (let i = 0; i < AGENTS; i++)
      agents.push(createAgent({ redis: url, namespace, agentId: `bench-offload-${i}` }))
    await Promise.all(agents.map((agent) => agent.ready()))

    const watch = await watchGets(url, key)
    const getsBefore = await getCalls(admin)
    const started = performance.now()
    await publishRegistry(admin, names, { key })
    await until(() => agents.every((agent) => agent.mitigation(key) === 'local_cache'), 'the promotion')
    const issued = await Promise.all(agents.map((agent) => readSteadily(agent, key)))
    const elapsedMs = performance.now() - started
    const getsAfter = await getCalls(admin)
    await watch.settle()
    watch.stop()

    const reads = issued.reduce((sum, n) => sum + n, 0)
    const serverGets = getsAfter - getsBefore
    const reached = watch.gets
    const absorbed = 1 - reached / reads
    const lifetimeMs = Math.min(KEY_TTL_SECONDS * 1000 * DEFAULT_TTL_FRACTION, DEFAULT_MAX_TTL_MS)
    const lifetimes = elapsedMs / lifetimeMs
    const perAgentPerLifetime = reached / AGENTS / Math.ceil(lifetimes)
    const hits = agents.reduce((sum, agent) => sum + agent.stats().l1Hits, 0)
    console.log(
      `offload: ${reads} reads issued by ${AGENTS} agents over ${(elapsedMs / 1000).toFixed(1)} s, ` +
        `${reached} GETs of the key reached Redis (MONITOR; cmdstat_get delta, every client's GETs: ${serverGets}), ` +
        `${hits} L1 hits; absorbed ${(absorbed * 100).toFixed(3)}%; ` +
        `L1 lifetime ${lifetimeMs} ms, ${perAgentPerLifetime.toFixed(2)} reads per agent per lifetime begun ` +
        `(${lifetimes.toFixed(1)} lifetimes)`,
    )
    return [
      {
        benchmark: `offload: ${AGENTS} agents x ${READS_PER_SECOND} reads/s of one local_cache key, ${SECONDS} s`,
        heatsink: `${reached} of ${reads} reads reached Redis (${(absorbed * 100).toFixed(3)}% absorbed)`,
        baseline: 'one read per agent per L1 lifetime',
        baselineFigure: `${AGENTS} x ${Math.ceil(lifetimes)} = ${AGENTS * Math.ceil(lifetimes)} reads`,
        ratio: reached / (AGENTS * Math.ceil(lifetimes)),
        note: `reads per agent per L1 lifetime: ${perAgentPerLifetime.toFixed(2)} (aim <= 1); absorbed aim >= 99.9%`,
      },
    ]
  } finally {
    await Promise.all(agents.map((agent) => agent.close()))
    await removeNamespace(admin, namespace)
    admin.disconnect()
  }
}

// Paced by elapsed time, not by timer count, so a late timer catches up instead of lowering the rate.
async function readSteadily(agent: Agent<Redis>, key: string): Promise<number> {
  const start = performance.now()
  let issued = 0
  for (;;) {
    const elapsed = performance.now() - start
    if (elapsed >= SECONDS * 1000) return issued
    const due = Math.floor((elapsed / 1000) * READS_PER_SECOND)
    const reads: Promise<string | null>[] = []
    for (; issued < due; issued++) reads.push(agent.get(key))
    await Promise.all(reads)
    await new Promise((resolve) => setTimeout(resolve, TICK_MS))
  }
}

async function getCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats')
  return Number(/cmdstat_get:calls=(\d+)/.exec(info)?.[1] ?? 0)
}
