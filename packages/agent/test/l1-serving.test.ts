import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import type { Agent } from '../src/index.js'
import { demoteRegistry, publishRegistry } from '../src/testing.js'
import { startMonitor, useAgents, waitFor } from './support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

// L1 entries must outlive every test here, so that only an invalidation can explain a fresh value.
const LONG_L1 = { maxTtlMs: 60_000 }

async function threeAgents(): Promise<Agent[]> {
  const agents = [0, 1, 2].map((i) => newAgent({ agentId: `agent-${i}`, l1: LONG_L1 }))
  await Promise.all(agents.map((agent) => agent.ready()))
  return agents
}

describe('L1 on every agent', () => {
  it('serves a promoted key from L1 on every agent after one broadcast, with no further GET', async () => {
    const { namespace, url } = redis()
    const names = createNames(namespace)
    const key = `${namespace}:profile:42`
    const plain = redis().client()
    await plain.set(key, 'v1')
    const agents = await threeAgents()
    const monitor = await startMonitor(url)
    try {
      await publishRegistry(plain, names, { key })
      // One broadcast: each agent takes the promotion and fills L1 at once.
      await waitFor(
        () =>
          agents.every((agent) => agent.mitigation(key) === 'local_cache' && agent.stats().l1Entries === 1),
        'the promotion on every agent',
      )
      await monitor.sync()
      const fills = monitor.count('get', key)
      expect(fills).toBe(3)

      for (const agent of agents) {
        for (let i = 0; i < 10; i++) expect(await agent.get(key)).toBe('v1')
        expect(agent.stats()).toMatchObject({ l1Hits: 10, l1Misses: 0, hotKeys: { local_cache: 1 } })
      }
      await monitor.sync()
      expect(monitor.count('get', key)).toBe(fills)
    } finally {
      monitor.stop()
    }
  })

  it('after a write through one agent resolves and one delivery passes, no agent serves the old value', async () => {
    const { namespace } = redis()
    const key = `${namespace}:config`
    const plain = redis().client()
    await plain.set(key, 'old')
    const agents = await threeAgents()
    const [writer, ...others] = agents as [Agent, Agent, Agent]
    await publishRegistry(plain, createNames(namespace), { key })
    await waitFor(() => agents.every((agent) => agent.stats().l1Entries === 1), 'L1 filled everywhere')
    for (const agent of agents) expect(await agent.get(key)).toBe('old')

    const before = others.map((agent) => agent.stats().l1Invalidations)
    expect(await writer.set(key, 'new')).toBe('OK')
    // The writer's own L1 is already clean when its write resolves.
    expect(await writer.get(key)).toBe('new')
    await waitFor(
      () =>
        others.every((agent, i) => {
          const now = agent.stats().l1Invalidations
          return now.pubsub + now.tracking > (before[i]?.pubsub ?? 0) + (before[i]?.tracking ?? 0)
        }),
      'the invalidation on the other agents',
    )
    for (const agent of agents) expect(await agent.get(key)).toBe('new')
    // And the fresh value is cached again. Reading until then: the write reaches an agent twice (its broadcast
    // and Redis tracking), and the later of the two may drop a refill the earlier one allowed.
    await waitFor(async () => {
      for (const agent of agents) expect(await agent.get(key)).toBe('new')
      return agents.every((agent) => agent.stats().l1Entries === 1)
    }, 'L1 refilled')
    for (const agent of agents) expect(await agent.get(key)).toBe('new')
  })

  it('a direct write by a plain client invalidates L1 on every agent within network delay', async () => {
    const { namespace } = redis()
    const key = `${namespace}:flag`
    const plain = redis().client()
    await plain.set(key, 'a')
    const agents = await threeAgents()
    await publishRegistry(plain, createNames(namespace), { key })
    await waitFor(() => agents.every((agent) => agent.stats().l1Entries === 1), 'L1 filled everywhere')
    for (const agent of agents) expect(await agent.get(key)).toBe('a')

    await plain.set(key, 'b')
    const waited = await waitFor(
      async () => (await Promise.all(agents.map((agent) => agent.get(key)))).every((value) => value === 'b'),
      'every agent to serve the new value',
      250,
    )
    expect(waited).toBeLessThan(250)
    for (const agent of agents) expect(agent.stats().l1Invalidations.tracking).toBeGreaterThanOrEqual(1)

    await plain.del(key)
    await waitFor(
      async () => (await Promise.all(agents.map((agent) => agent.get(key)))).every((value) => value === null),
      'every agent to see the delete',
      250,
    )
  })

  it('a demoted key leaves L1 and is served from Redis again', async () => {
    const { namespace } = redis()
    const names = createNames(namespace)
    const key = `${namespace}:deal`
    const plain = redis().client()
    await plain.set(key, 'x')
    const agents = await threeAgents()
    await publishRegistry(plain, names, { key })
    await waitFor(() => agents.every((agent) => agent.stats().l1Entries === 1), 'L1 filled everywhere')

    await demoteRegistry(plain, names, key)
    await waitFor(
      () => agents.every((agent) => agent.mitigation(key) === undefined),
      'the demotion everywhere',
    )
    for (const agent of agents) {
      expect(agent.stats()).toMatchObject({ l1Entries: 0, l1Invalidations: { registry: 1 } })
      const misses = agent.stats().l1Misses
      const hits = agent.stats().l1Hits
      expect(await agent.get(key)).toBe('x')
      expect(agent.stats()).toMatchObject({ l1Entries: 0, l1Hits: hits, l1Misses: misses })
    }
  })

  it('a key promoted to split or coalesce passes through for now', async () => {
    const { namespace } = redis()
    const names = createNames(namespace)
    const plain = redis().client()
    await plain.set(`${namespace}:s`, '1')
    const agent = newAgent()
    await agent.ready()
    await publishRegistry(plain, names, { key: `${namespace}:s`, mitigation: 'split' })
    await publishRegistry(plain, names, { key: `${namespace}:c`, mitigation: 'coalesce' })
    await waitFor(() => agent.mitigation(`${namespace}:c`) === 'coalesce', 'both promotions')
    expect(agent.mitigation(`${namespace}:s`)).toBe('split')
    expect(await agent.get(`${namespace}:s`)).toBe('1')
    expect(await agent.mget(`${namespace}:s`, `${namespace}:c`)).toEqual(['1', null])
    expect(agent.stats()).toMatchObject({ l1Entries: 0, l1Hits: 0, hotKeys: { split: 1, coalesce: 1 } })
  })
})
