import type { Agent } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import { pacedReads, usePrivateRedis, useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listedStorms, readyAgents, stormWatchingReplica } from './support/miss-storms.js'

const redis = usePrivateRedis()
const postgres = useTestPostgres({ scope: 'all' })

const NAMESPACE = 'storms-expiry-e2e'
const KEY = 'storms:fx:rates'
const AGENTS = 3
const READS_PER_AGENT = 1000
const LOAD_MS = 300

describe('a hot getOrLoad key expiring under concurrent readers', () => {
  let aggregator: Aggregator
  let client: Redis
  const agents: Agent[] = []
  const stops: Array<() => void> = []
  let loads = 0
  // Long at first, so the key has a quiet past (every read a hit); then 1 s, so it expires under its readers.
  let ttlSeconds = 300

  beforeAll(async () => {
    const service = { redisUrl: redis().url, databaseUrl: postgres().url, namespace: NAMESPACE }
    aggregator = stormWatchingReplica(service, 'expiry-1')
    await aggregator.start()
    client = new Redis(redis().url)
    agents.push(...(await readyAgents(redis().url, NAMESPACE, AGENTS, 'expiry-agent')))
    const loader = async () => {
      loads++
      await new Promise((resolve) => setTimeout(resolve, LOAD_MS))
      return { eurUsd: 1.08 }
    }
    for (const agent of agents) {
      stops.push(
        pacedReads(READS_PER_AGENT, () => {
          // No early refresh: the key really expires, and every read during the load joins it.
          void agent.getOrLoad(KEY, loader, { ttlSeconds, xfetchBeta: 0, jitter: 0 }).catch(() => {})
        }),
      )
    }
  }, 60_000)

  afterAll(async () => {
    for (const stop of stops) stop()
    await Promise.all(agents.map((agent) => agent.close()))
    await client?.quit()
    await aggregator?.stop()
  })

  it('raises no miss_storm: the readers coalesced onto one load are one miss, not one each', async () => {
    await new Promise((resolve) => setTimeout(resolve, 7000))
    const loadsBefore = loads
    const waitersBefore = coalescedWaiters(agents)
    ttlSeconds = 1
    await client.pexpire(KEY, 1)
    await new Promise((resolve) => setTimeout(resolve, 6000))

    // The herds happened: the key expired every second, and each load had many readers waiting on it, which
    // counted one miss each would be hundreds of misses a second from a key whose past had none.
    expect(loads - loadsBefore).toBeGreaterThanOrEqual(4)
    expect(coalescedWaiters(agents) - waitersBefore).toBeGreaterThan(2000)
    expect(await listedStorms(aggregator)).toEqual([])
    // What the aggregator summed: one miss per agent and expiry (the 1.1 s period puts one or none in a window).
    const detection = aggregator.detection
    const [counts] = await detection.counters.read([KEY], detection.traffic.latestCompleteWindow())
    expect(counts?.misses ?? 0).toBeLessThanOrEqual(2 * AGENTS)
  }, 60_000)
})

function coalescedWaiters(agents: readonly Agent[]): number {
  return agents.reduce((sum, agent) => sum + agent.stats().stampede.coalescedWaiters, 0)
}
