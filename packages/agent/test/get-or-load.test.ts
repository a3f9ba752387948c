import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createNames } from '@heatsink/protocol'
import { ManualClock } from '@heatsink/sketch'
import { decodeEnvelope, unwrapStored } from '@heatsink/stampede'
import { useTestRedis } from '@heatsink/test'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { AGENT_CHANNELS, type Agent, type AgentOptions, type InvalidatedEvent } from '../src/index.js'
import { publishRegistry } from '../src/testing.js'
import { controlledLoader, startMonitor, useAgents, waitFor } from './support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

const START = 1_700_000_000_000
// Leases are real Redis TTLs: long ones keep them from running out while a manual clock stands still.
const STAMPEDE = { leaseMs: 60_000 }
const options = { ttlSeconds: 60 }

function keyOf(name: string): string {
  return `${redis().namespace}:${name}`
}

/** Registers `key` with `mitigation` and waits until every agent has taken the change. */
async function register(agents: readonly Agent[], key: string, mitigation: 'local_cache' | 'coalesce') {
  await publishRegistry(redis().client(), createNames(redis().namespace), { key, mitigation })
  await waitFor(() => agents.every((agent) => agent.mitigation(key) === mitigation), `${key} registered`)
}

/** A ready agent with a long-lived L1, and `name` (absent) registered local_cache on it. */
async function localCacheAgent(name: string, more: Partial<AgentOptions<Redis>> = {}) {
  const agent = newAgent({ l1: { maxTtlMs: 60_000 }, stampede: STAMPEDE, ...more })
  await agent.ready()
  const key = keyOf(name)
  await register([agent], key, 'local_cache')
  return { agent, key }
}

/** A loader that returns `value` and counts its calls. */
function counting<T>(value: T) {
  const loader = Object.assign(
    async () => {
      loader.calls++
      return value
    },
    { calls: 0 },
  )
  return loader
}

/** Whether `read` was served from the agent's L1. */
async function fromL1(agent: Agent, read: () => Promise<unknown>): Promise<boolean> {
  const hits = agent.stats().l1Hits
  await read()
  return agent.stats().l1Hits > hits
}

/**
 * Reads until a read is served from L1. The L1 fill follows the load, and the load's own write may void the
 * first fill: Redis tracking reports it to the connection that read the key before.
 */
async function untilFromL1(agent: Agent, key: string, read: () => Promise<unknown>): Promise<void> {
  await waitFor(() => fromL1(agent, read), `${key} served from L1`)
}

describe('getOrLoad through the agent', () => {
  it('makes one loader call for 10,000 concurrent calls on a cold key, and every caller gets its value', async () => {
    const agent = newAgent({ clock: new ManualClock(START), stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('product:1')
    const loader = controlledLoader<{ id: number }>()

    const calls = Array.from({ length: 10_000 }, () => agent.getOrLoad(key, loader, options))
    await waitFor(() => loader.calls > 0, 'the load')
    loader.call(0).resolve({ id: 1 })
    const values = await Promise.all(calls)

    expect(loader.calls).toBe(1)
    expect(values.every((value) => value.id === 1)).toBe(true)
    expect(agent.stats().stampede).toMatchObject({
      calls: 10_000,
      upstreamLoads: 1,
      coalescedWaiters: 9_999,
      leaseWaits: 0,
      timeouts: 0,
    })
    expect(agent.stats()).toMatchObject({ requests: 10_000, reads: 10_000 })
    // The next call finds what the load stored.
    expect(await agent.getOrLoad(key, loader, options)).toEqual({ id: 1 })
    expect(loader.calls).toBe(1)
  })

  it('makes one loader call across 8 agents x 1,000 concurrent callers on an expired key', async () => {
    // The clock stands still while the agents wait: the seven waiting agents can only learn of the fill
    // through the announcement on their own subscriber, not by polling.
    const clock = new ManualClock(START)
    const agents = Array.from({ length: 8 }, (_, i) =>
      newAgent({ agentId: `agent-${i}`, clock, stampede: STAMPEDE }),
    )
    await Promise.all(agents.map((agent) => agent.ready()))
    const key = keyOf('home')
    expect(await agents[0]?.getOrLoad(key, async () => 'v1', { ttlSeconds: 10, jitter: 0 })).toBe('v1')
    clock.advance(10_000)

    const loader = controlledLoader<string>()
    const calls = agents.flatMap((agent) =>
      Array.from({ length: 1_000 }, () => agent.getOrLoad(key, loader, { ttlSeconds: 10 })),
    )
    await waitFor(
      () =>
        loader.calls === 1 && agents.filter((agent) => agent.stats().stampede.leaseWaits === 1).length === 7,
      'one load, and seven agents waiting on its lease',
      10_000,
    )
    loader.call(0).resolve('v2')
    const values = await Promise.all(calls)

    expect(loader.calls).toBe(1)
    expect(new Set(values)).toEqual(new Set(['v2']))
    const waiters = agents.reduce((sum, agent) => sum + agent.stats().stampede.coalescedWaiters, 0)
    expect(waiters).toBe(7_999)
  })

  it("gives every waiter the loader's error, and the next call loads again", async () => {
    const agent = newAgent({ stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('report')
    const loader = controlledLoader<string>()
    const failure = new Error('database down')

    const calls = Array.from({ length: 1_000 }, () =>
      agent.getOrLoad(key, loader, options).then(
        () => undefined,
        (error: unknown) => error,
      ),
    )
    await waitFor(() => loader.calls > 0, 'the load')
    loader.call(0).reject(failure)
    const errors = await Promise.all(calls)
    expect(loader.calls).toBe(1)
    expect(errors.every((error) => error === failure)).toBe(true)

    const again = agent.getOrLoad(key, loader, options)
    await waitFor(() => loader.calls === 2, 'the next load')
    loader.call(1).resolve('recovered')
    expect(await again).toBe('recovered')
  })

  it('a set through another agent during a load leaves no old value in Redis or any L1', async () => {
    const agents = [0, 1, 2].map((i) =>
      newAgent({ agentId: `agent-${i}`, l1: { maxTtlMs: 60_000 }, stampede: STAMPEDE }),
    )
    await Promise.all(agents.map((agent) => agent.ready()))
    const [loading, writing] = agents as [Agent, Agent, Agent]
    const key = keyOf('price')
    await register(agents, key, 'local_cache')
    const plain = redis().client()
    const loader = controlledLoader<string>()

    const inFlight = loading.getOrLoad(key, loader, options)
    await waitFor(() => loader.calls === 1, 'the load')
    expect(await writing.set(key, JSON.stringify('new'))).toBe('OK')
    loader.call(0).resolve('old')
    // Its callers asked before the write; nothing else may keep what it loaded.
    expect(await inFlight).toBe('old')
    expect(await plain.get(key)).toBe('"new"')

    // Every agent, from Redis and then from its refilled L1, gives the new value.
    for (const agent of agents) {
      await untilFromL1(agent, key, async () => {
        expect(await agent.getOrLoad(key, loader, options)).toBe('new')
        expect(await agent.get(key)).toBe('"new"')
      })
    }
    for (const agent of agents) {
      expect(
        await fromL1(agent, async () => expect(await agent.getOrLoad(key, loader, options)).toBe('new')),
      ).toBe(true)
    }
    expect(await plain.get(key)).toBe('"new"')
    expect(loader.calls).toBe(1)
  })

  it('a delete through another agent (array form) during a load caches nothing; the next caller loads', async () => {
    const [loading, writing] = [newAgent({ stampede: STAMPEDE }), newAgent({ stampede: STAMPEDE })]
    await Promise.all([loading.ready(), writing.ready()])
    const key = keyOf('profile')
    // A plain DEL is sent as DEL (see CommandRouter: plain commands are sent as they are): what reaches the loading agent is the
    // invalidation the writer publishes for a registered key, which releases its lease, so its fill is refused.
    await register([loading, writing], key, 'coalesce')
    const loader = controlledLoader<string>()
    const heard: string[] = []
    const onInvalidated = (message: unknown) => {
      const event = message as InvalidatedEvent
      if (event.agentId === loading.agentId && event.source === 'pubsub' && event.key !== null)
        heard.push(event.key)
    }
    subscribe(AGENT_CHANNELS.invalidated, onInvalidated)

    const inFlight = loading.getOrLoad(key, loader, options)
    await waitFor(() => loader.calls === 1, 'the load')
    expect(await writing.del([key, keyOf('other')])).toBe(0)
    await waitFor(() => heard.includes(key), "the writer's invalidation")
    unsubscribe(AGENT_CHANNELS.invalidated, onInvalidated)
    loader.call(0).resolve('read before the delete')
    expect(await inFlight).toBe('read before the delete')
    expect(await redis().client().exists(key)).toBe(0)

    const next = loading.getOrLoad(key, loader, options)
    await waitFor(() => loader.calls === 2, 'a new load')
    loader.call(1).resolve('read after the delete')
    expect(await next).toBe('read after the delete')
    expect(await writing.getOrLoad(key, loader, options)).toBe('read after the delete')
  })

  it('a write that bypasses the agents, reported by tracking, keeps a load in flight out of Redis', async () => {
    // Promotion prefills L1 (an absent key), so the tracked connection has read the key.
    const { agent, key } = await localCacheAgent('flag')
    await waitFor(() => agent.stats().l1Entries === 1, 'the prefill')
    const plain = redis().client()
    const loader = controlledLoader<string>()

    // Without the lease, only the invalidation can keep this load from overwriting the write.
    const inFlight = agent.getOrLoad(key, loader, { ...options, lock: false })
    await waitFor(() => loader.calls === 1, 'the load')
    const before = agent.stats().l1Invalidations.tracking
    await plain.set(key, JSON.stringify('written directly'))
    await waitFor(() => agent.stats().l1Invalidations.tracking > before, 'the tracking invalidation')
    loader.call(0).resolve('read before the write')
    expect(await inFlight).toBe('read before the write')
    expect(await plain.get(key)).toBe('"written directly"')
    expect(await agent.getOrLoad(key, loader, options)).toBe('written directly')
    expect(loader.calls).toBe(1)
  })

  it('serves a local_cache key from L1 after the first load, to getOrLoad and plain reads alike', async () => {
    const { agent, key } = await localCacheAgent('catalog')
    const loader = counting({ name: 'catalog', items: [1, 2, 3] })
    await untilFromL1(agent, key, () => agent.getOrLoad(key, loader, options))

    const monitor = await startMonitor(redis().url)
    try {
      const hits = agent.stats().l1Hits
      const values = await Promise.all(
        Array.from({ length: 100 }, () => agent.getOrLoad(key, loader, options)),
      )
      expect(values.every((value) => value.items.length === 3)).toBe(true)
      // A plain read of the same key answers what Redis holds, getOrLoad's envelope of the codec's text.
      expect(unwrapStored(await agent.get(key))).toBe('{"name":"catalog","items":[1,2,3]}')
      await monitor.sync()
      expect(monitor.count('get', key)).toBe(0)
      expect(agent.stats().l1Hits).toBe(hits + 101)
      expect(loader.calls).toBe(1)
    } finally {
      monitor.stop()
    }
  })

  it('caches a negative result, in Redis and in L1, until its negative TTL', async () => {
    const clock = new ManualClock(START)
    const { agent, key } = await localCacheAgent('user:deleted', { clock })
    const loader = counting(undefined)
    const negative = { ttlSeconds: 300, negativeTtlSeconds: 5 }
    await untilFromL1(agent, key, async () =>
      expect(await agent.getOrLoad(key, loader, negative)).toBeUndefined(),
    )

    const hits = agent.stats().l1Hits
    for (let i = 0; i < 50; i++) expect(await agent.getOrLoad(key, loader, negative)).toBeUndefined()
    expect(agent.stats().l1Hits).toBe(hits + 50)
    expect(unwrapStored(await agent.get(key))).toBeNull()
    expect(loader.calls).toBe(1)
    expect(decodeEnvelope((await redis().client().get(key)) ?? '')).toMatchObject({ kind: 'u', payload: '' })

    clock.advance(6_000) // past 5 s + 10% jitter: L1's entry and the negative entry are both over
    expect(await agent.getOrLoad(key, loader, negative)).toBeUndefined()
    expect(loader.calls).toBe(2)
  })

  it('serves the expired L1 entry to a caller whose load outlasts its maxWaitMs, and the load still lands', async () => {
    const clock = new ManualClock(START)
    const { agent, key } = await localCacheAgent('dashboard', { clock })
    const ten = { ttlSeconds: 10, jitter: 0 }
    await untilFromL1(agent, key, () => agent.getOrLoad(key, async () => 'v1', ten))

    clock.advance(11_000) // L1's entry (2 s) and the value's TTL (10 s) are over
    const loader = controlledLoader<string>()
    const late = agent.getOrLoad(key, loader, { ...ten, maxWaitMs: 100 })
    await waitFor(() => loader.calls === 1, 'the reload')
    clock.advance(100)
    expect(await late).toBe('v1')
    expect(agent.stats().stampede).toMatchObject({ timeouts: 1, staleServes: 1 })

    loader.call(0).resolve('v2')
    await waitFor(async () => (await agent.getOrLoad(key, loader, ten)) === 'v2', 'the reloaded value')
    expect(loader.calls).toBe(1)
  })

  it('rejects calls after close with AgentClosedError', async () => {
    const agent = newAgent({ stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('closing')
    const loader = controlledLoader<string>()
    const waiting = agent.getOrLoad(key, loader, options).catch((error: unknown) => error)
    await waitFor(() => loader.calls === 1, 'the load')
    await agent.close()
    expect(await waiting).toMatchObject({ code: 'E_AGENT_CLOSED' })
    await expect(agent.getOrLoad(key, loader, options)).rejects.toMatchObject({ code: 'E_AGENT_CLOSED' })
  })
})
