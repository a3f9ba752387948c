import { type Agent, createAgent } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { keyNames, seededRandom, ZipfSampler } from '@heatsink/workload'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessAggregator } from './support/in-process.js'
import { drive } from './support/traffic.js'

const redis = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })

const AGENTS = 3
const HOT_RPS = 2000
const BACKGROUND_RPS_PER_AGENT = 2000
const VIRAL_RPS_PER_AGENT = 1200
const TRIALS = 6
const WINDOW_MS = 1000

describe('end to end: agents, the aggregator and a key that goes viral', () => {
  let aggregator: Aggregator
  const agents: Agent[] = []
  const stops: Array<() => void> = []

  beforeAll(async () => {
    aggregator = inProcessAggregator(
      { redisUrl: redis().url, databaseUrl: postgres().url, namespace: redis().namespace },
      { HEATSINK_HOT_RPS: String(HOT_RPS), HEATSINK_WINDOW_MS: String(WINDOW_MS) },
    )
    await aggregator.start()
    for (let i = 0; i < AGENTS; i++) {
      const agent = createAgent({
        redis: redis().url,
        namespace: redis().namespace,
        agentId: `e2e-agent-${i}`,
      })
      await agent.ready()
      agents.push(agent)
    }
    // A Zipf background over 5,000 keys: its hottest key draws about 12% of 6,000 req/s, far below the threshold.
    const names = keyNames(5000, (i) => `${redis().namespace}:product:${i}`)
    agents.forEach((agent, i) => {
      const zipf = new ZipfSampler(names.length, 1.1, seededRandom(i + 1))
      stops.push(drive(agent, BACKGROUND_RPS_PER_AGENT, () => names[zipf.next()] as string))
    })
  }, 60_000)

  afterAll(async () => {
    for (const stop of stops) stop()
    await Promise.all(agents.map((agent) => agent.close()))
    await aggregator?.stop()
  })

  it('detects each viral key and serves it from L1 on every agent, within the latency the specification allows', async () => {
    const client = redis().client()
    const random = seededRandom(99)
    const latencies: number[] = []
    for (let trial = 0; trial < TRIALS; trial++) {
      const viral = `${redis().namespace}:post:viral:${trial}`
      await client.set(viral, `celebrity post ${trial}`, 'EX', 600)
      // Onsets at random phases of the one-second window, as real ones would be.
      await new Promise((r) => setTimeout(r, random() * WINDOW_MS))
      const onset = Date.now()
      const stopViral = agents.map((agent) => drive(agent, VIRAL_RPS_PER_AGENT, () => viral))
      try {
        while (!agents.every((agent) => agent.mitigation(viral) === 'local_cache')) {
          if (Date.now() - onset > 5000) throw new Error(`${viral} not mitigated on every agent within 5 s`)
          await new Promise((r) => setTimeout(r, 5))
        }
        latencies.push(Date.now() - onset)
        // Mitigation active: after one fill, every agent answers from L1 with the right value.
        for (const agent of agents) {
          expect(await agent.get(viral)).toBe(`celebrity post ${trial}`)
          const hits = agent.stats().l1Hits
          expect(await agent.get(viral)).toBe(`celebrity post ${trial}`)
          expect(agent.stats().l1Hits).toBe(hits + 1)
        }
      } finally {
        for (const stop of stopViral) stop()
      }
    }
    const sorted = [...latencies].sort((a, b) => a - b)
    console.log(
      `onset-to-mitigation on all ${AGENTS} agents over ${TRIALS} trials: ${sorted.join(', ')} ms (max ${sorted.at(-1)} ms)`,
    )
    // The bound Heatsink promises (5 s from onset to mitigation); the benchmark reports p50/p99 over more trials against the 1.5 s aim.
    for (const latency of latencies) expect(latency).toBeLessThan(5000)
    const registry = await aggregator.registry.list()
    expect(registry.filter((e) => e.key.includes(':post:viral:')).map((e) => e.mitigation)).toEqual(
      Array(TRIALS).fill('local_cache'),
    )
    expect(registry.some((e) => e.key.includes(':product:'))).toBe(false)
  }, 90_000)
})
