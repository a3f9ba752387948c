import type { Agent } from '@heatsink/agent'
import { createNames } from '@heatsink/protocol'
import { describe, expect, it } from 'vitest'
import { drive, useAgents } from './support/agents.js'
import type { AggregatorProcess } from './support/aggregator-process.js'
import { type FaultWorld, usePrivateServices } from './support/private-services.js'
import { until } from './support/until.js'

const world = usePrivateServices()
const newAgent = useAgents()
const HOT_RPS = 2000
// The bound Heatsink promises from onset to mitigation (5 s; typically under 2 s; detection's own figure is p99 0.98 s,
// and this test prints what it measured): a detector left frozen by the loss would never meet it, and the bound
// holds when the whole of `pnpm test` shares the two cores with this file.
const DETECTION_BOUND_MS = 5000
// The aggregators flush every second; the rest is room for two shared cores.
const SNAPSHOT_BACK_MS = 2000

const losses: Array<[string, (world: FaultWorld, agents: readonly Agent[]) => Promise<void>]> = [
  [
    'a crash and restart without persistence',
    async (w, agents) => {
      await w.server.redis.crash()
      // Blind (no channel can tell them of writes): every agent has dropped L1 and serves nothing from it.
      await until('every agent blind with L1 empty', () =>
        agents.every((a) => !a.stats().invalidationChannelUp && a.stats().l1Entries === 0),
      )
      const hits = agents.map((a) => a.stats().l1Hits)
      await new Promise((resolve) => setTimeout(resolve, 500))
      // The application's reads went on meanwhile; none was answered from L1.
      expect(agents.map((a) => a.stats().l1Hits)).toEqual(hits)
      expect(agents.every((a) => a.stats().l1Entries === 0)).toBe(true)
      await w.server.redis.restart()
    },
  ],
  [
    'FLUSHALL',
    async (w) => {
      const client = w.redis.client()
      await client.flushall()
      const flushed = Date.now()
      // The snapshot agents reload from is republished from Postgres on the aggregators' next flush (operations.md).
      const snapshot = createNames(w.redis.namespace).registrySnapshotKey
      await until(
        'the registry snapshot republished',
        async () => (await client.exists(snapshot)) === 1,
        5000,
        5,
      )
      console.log(`[faults] FLUSHALL: registry snapshot back after ${Date.now() - flushed} ms`)
      expect(Date.now() - flushed).toBeLessThan(SNAPSHOT_BACK_MS)
    },
  ],
]

describe.each(losses)('Redis loses its data: %s', (_name, loseData) => {
  it('agents serve no stale value, aggregators and agents recover by themselves, and a new hot key is promoted in time', async () => {
    const { redis } = world()
    const env = { HEATSINK_HOT_RPS: String(HOT_RPS), HEATSINK_INGEST_STALL_MS: '1500' }
    const replicas = [await world().startReplica(env), await world().startReplica(env)]
    const agents = [
      await newAgent({ url: redis.url, namespace: redis.namespace, agentId: 'agent-a' }),
      await newAgent({ url: redis.url, namespace: redis.namespace, agentId: 'agent-b' }),
    ]
    const writer = redis.client()
    // The crash refuses connections for a moment; the client reconnects, which is all this test needs of it.
    writer.on('error', () => {})
    const cached = `${redis.namespace}:cached`
    await writer.set(cached, 'before')
    expect(
      (await (replicas[0] as AggregatorProcess).promote(cached, { mitigation: 'local_cache' })).status,
    ).toBe(201)
    for (const agent of agents) {
      await until('the promotion on every agent', () => agent.mitigation(cached) === 'local_cache')
      await until('an L1 entry', async () => {
        await agent.get(cached)
        return agent.stats().l1Entries === 1
      })
    }

    // Reads continue throughout, as an application's would. Each read is filed under the phase it started in.
    const seen: Array<Set<string | null>> = [new Set(), new Set(), new Set()]
    let phase = 0
    const reading = setInterval(() => {
      const startedIn = phase
      for (const agent of agents) {
        void agent.get(cached).then(
          (value) => seen[startedIn]?.add(value),
          () => {},
        )
      }
    }, 5)
    const dropped = () =>
      agents.map((agent) => Object.values(agent.stats().l1Invalidations).reduce((a, b) => a + b))
    const droppedBefore = dropped()
    try {
      await loseData(world(), agents)
      phase = 1
      // Every agent dropped its L1 (the lost channel, or Redis's tracking message for the flush).
      await until('L1 dropped on every agent', () => dropped().every((n, i) => n > (droppedBefore[i] ?? 0)))
      await until('the writer back', async () => (await writer.ping().catch(() => '')) === 'PONG', 10_000)
      expect(await writer.get(cached)).toBeNull()
      await until('reads answered after the loss', () => (seen[1]?.size ?? 0) > 0, 10_000)
      await writer.set(cached, 'after')
      // Another client's write reaches L1 by Redis's tracking message: p99 4.8 ms (docs/performance.md).
      await new Promise((resolve) => setTimeout(resolve, 50))
      phase = 2
      await new Promise((resolve) => setTimeout(resolve, 300))
    } finally {
      clearInterval(reading)
    }
    // No read begun after the loss returned the value Redis lost; every read begun after the write returned it.
    expect([...(seen[1] ?? [])]).not.toContain('before')
    expect([...(seen[2] ?? [])]).toEqual(['after'])

    // Recovered without a restart: channels up, L1 serving again, replicas ready with ingest flowing.
    for (const agent of agents) {
      await until('channels live again', () => agent.stats().invalidationChannelUp, 10_000)
      expect(agent.mitigation(cached)).toBe('local_cache')
      await until('L1 serving again', async () => {
        const hits = agent.stats().l1Hits
        const value = await agent.get(cached)
        return value === 'after' && agent.stats().l1Hits > hits
      })
    }
    for (const replica of replicas)
      await until('/readyz 200', async () => (await replica.status('/readyz')) === 200, 10_000)

    const viral = `${redis.namespace}:viral`
    await writer.set(viral, 'post')
    const onset = Date.now()
    const stops = agents.map((agent) => drive(agent, viral, HOT_RPS))
    try {
      await until(
        'the new hot key mitigated on every agent',
        () => agents.every((a: Agent) => a.mitigation(viral) === 'local_cache'),
        10_000,
        5,
      )
    } finally {
      for (const stop of stops) stop()
    }
    const latency = Date.now() - onset
    console.log(`[faults] ${_name}: hot key promoted on every agent ${latency} ms after onset`)
    expect(latency).toBeLessThan(DETECTION_BOUND_MS)
    expect(await (replicas[0] as AggregatorProcess).hotKeys()).toContain(viral)
  }, 60_000)
})
