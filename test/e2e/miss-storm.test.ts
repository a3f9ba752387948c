import type { Agent } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import type { MissStorm } from '@heatsink/protocol'
import { pacedReads, usePrivateRedis, useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listedStorms, readyAgents, stormWatchingReplica } from './support/miss-storms.js'

const redis = usePrivateRedis()
const postgres = useTestPostgres({ scope: 'all' })

const NAMESPACE = 'storms-e2e'
const KEY = 'storms:config:flags'
const AGENTS = 3
const READS_PER_AGENT = 400
const DELETES_PER_SECOND = 100
const NEVER_CACHED = 'storms:never-cached'

describe('a miss storm on a getOrLoad key, made by real agents against a real Redis', () => {
  let aggregator: Aggregator
  // A second replica sharing the report streams: the storm's reports are applied by both, and still raise one event.
  let second: Aggregator
  let client: Redis
  const agents: Agent[] = []
  const stops: Array<() => void> = []
  let loads = 0

  beforeAll(async () => {
    // A hot threshold far above the traffic: the key is not mitigated when its storm begins, so the storm applies
    // coalescing itself.
    const service = { redisUrl: redis().url, databaseUrl: postgres().url, namespace: NAMESPACE }
    aggregator = stormWatchingReplica(service, 'storms-1')
    second = stormWatchingReplica(service, 'storms-2')
    await Promise.all([aggregator.start(), second.start()])
    client = new Redis(redis().url)
    agents.push(...(await readyAgents(redis().url, NAMESPACE, AGENTS, 'storm-agent')))
    const loader = async () => {
      loads++
      await new Promise((resolve) => setTimeout(resolve, 2))
      return { flags: ['dark-mode'] }
    }
    for (const agent of agents) {
      stops.push(
        pacedReads(
          READS_PER_AGENT,
          () => void agent.getOrLoad(KEY, loader, { ttlSeconds: 300 }).catch(() => {}),
        ),
      )
      // A key never cached: it misses on every read from the start, which is its normal, not a storm.
      stops.push(pacedReads(200, () => void agent.get(NEVER_CACHED).catch(() => {})))
    }
  }, 60_000)

  afterAll(async () => {
    for (const stop of stops) stop()
    await Promise.all(agents.map((agent) => agent.close()))
    await client?.quit()
    await aggregator?.stop()
    await second?.stop()
  })

  const storms = () => listedStorms(aggregator)

  it('raises one miss_storm event within 2 s of the storm, applies coalescing, and counts it', async () => {
    // A quiet baseline: the key loaded once and then read from Redis for more than half the baseline's 10 windows;
    // meanwhile NEVER_CACHED misses 600 times a second and raises nothing.
    await new Promise((resolve) => setTimeout(resolve, 7000))
    expect(await storms()).toEqual([])
    // It did miss at storm rates: only its having no quiet past kept it from being one.
    const detection = aggregator.detection
    const [never] = await detection.counters.read([NEVER_CACHED], detection.traffic.latestCompleteWindow())
    expect(never?.misses).toBeGreaterThan(300)
    const loadsBefore = loads

    const onset = Date.now()
    const deleting = setInterval(() => void client.del(KEY), 1000 / DELETES_PER_SECOND)
    try {
      let found: MissStorm[] = []
      while (found.length === 0 && Date.now() - onset < 6000) {
        await new Promise((resolve) => setTimeout(resolve, 25))
        found = await storms()
      }
      const detectedMs = Date.now() - onset
      console.log(`miss storm raised ${detectedMs} ms after the deletions began`)
      expect(found).toHaveLength(1)
      expect(detectedMs).toBeLessThan(2000)

      // The storm goes on for three more windows: still the one event.
      await new Promise((resolve) => setTimeout(resolve, 3000))
      const all = await storms()
      expect(all).toHaveLength(1)
      const [storm] = all
      expect(storm).toMatchObject({
        type: 'miss_storm',
        key: KEY,
        node: `127.0.0.1:${new URL(redis().url).port}`,
        action: 'coalesce_applied',
        mitigation: 'coalesce',
      })
      expect(storm?.missesPerSecond).toBeGreaterThanOrEqual(100)
      expect(storm?.baselinePerSecond).toBeLessThan(20)
      expect(loads - loadsBefore).toBeGreaterThan(100)
    } finally {
      clearInterval(deleting)
    }

    const entry = (await aggregator.registry.list()).find((e) => e.key === KEY)
    expect(entry?.mitigation).toBe('coalesce')
    // Counted once over both replicas, and listed alike by both.
    const raised = await Promise.all(
      [aggregator, second].map(async (replica) => {
        const text = await (await fetch(`${replica.url()}/metrics`)).text()
        return Number(/^heatsink_miss_storms_total (\d+)$/m.exec(text)?.[1])
      }),
    )
    expect(raised[0]! + raised[1]!).toBe(1)
    const listed = await second.app.inject({ method: 'GET', url: '/events?after=0&limit=5' })
    expect(listed.json().missStorms).toEqual(await storms())
  }, 60_000)
})
