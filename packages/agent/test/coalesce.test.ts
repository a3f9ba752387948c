import { createNames } from '@heatsink/protocol'
import { ManualClock } from '@heatsink/sketch'
import { unwrapStored } from '@heatsink/stampede'
import { useTestRedis } from '@heatsink/test'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { publishRegistry } from '../src/testing.js'
import { controlledLoader, startMonitor, useAgents, waitFor } from './support/helpers.js'
import { windowReports } from './support/window-reports.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

const START = 1_700_000_000_000

function keyOf(name: string): string {
  return `${redis().namespace}:${name}`
}

const reports = (client: Redis, agentId: string) => windowReports(client, redis().namespace, agentId)

describe('the coalesce mitigation on plain reads', () => {
  it('turns 1,000 concurrent GETs of the key into one Redis GET per agent', async () => {
    const agents = [0, 1, 2].map((i) => newAgent({ agentId: `agent-${i}` }))
    await Promise.all(agents.map((agent) => agent.ready()))
    const key = keyOf('trending')
    // Stored by getOrLoad, so Redis holds an envelope: plain reads answer it as Redis holds it.
    await agents[0]?.getOrLoad(key, async () => ({ rank: 1 }), { ttlSeconds: 60 })
    const stored = await redis().client().get(key)
    expect(unwrapStored(stored)).toBe('{"rank":1}')
    await publishRegistry(redis().client(), createNames(redis().namespace), { key, mitigation: 'coalesce' })
    await waitFor(() => agents.every((agent) => agent.mitigation(key) === 'coalesce'), 'the promotion')

    const monitor = await startMonitor(redis().url)
    try {
      const values = await Promise.all(
        agents.flatMap((agent) => Array.from({ length: 1_000 }, () => agent.get(key))),
      )
      expect(new Set(values)).toEqual(new Set([stored]))
      await monitor.sync()
      expect(monitor.count('get', key)).toBe(3)
      for (const agent of agents) expect(agent.stats().coalescedReads).toEqual({ sent: 1, joined: 999 })
      // MGET answers the key as GET does.
      expect(await agents[0]?.mget(key, keyOf('none'))).toEqual([stored, null])
    } finally {
      monitor.stop()
    }
  })

  it('does not let a read after a write join a read sent before it', async () => {
    const agent = newAgent()
    await agent.ready()
    const key = keyOf('config')
    const plain = redis().client()
    await plain.set(key, 'old')
    await publishRegistry(plain, createNames(redis().namespace), { key, mitigation: 'coalesce' })
    await waitFor(() => agent.mitigation(key) === 'coalesce', 'the promotion')

    // The first GET goes out before the write; the read after the write must send its own.
    const before = agent.get(key)
    const written = agent.set(key, 'new')
    const after = agent.get(key)
    expect(await written).toBe('OK')
    expect(await before).toBe('old')
    expect(await after).toBe('new')
    // The read after the write shares nothing: it waits behind the write on the agent's connection (the router's
    // write fence), so only the first was a coalesced read.
    expect(agent.stats().coalescedReads).toEqual({ sent: 1, joined: 0 })
  })
})

describe('per-key load statistics in window reports', () => {
  it('carry upstream loads and coalesced waiters, for registered keys and for hitters used with getOrLoad', async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({
      agentId: 'load-stats',
      clock,
      maxPartialReportsPerWindow: 0,
      // One top key: a key read once is no hitter, so its load statistics stay out of the report.
      sketch: { topK: 1 },
      stampede: { leaseMs: 60_000 },
    })
    await agent.ready()
    const hot = keyOf('hot')
    const cold = keyOf('cold')
    const coalesced = keyOf('coalesced')
    await publishRegistry(redis().client(), createNames(redis().namespace), {
      key: coalesced,
      mitigation: 'coalesce',
    })
    await waitFor(() => agent.mitigation(coalesced) === 'coalesce', 'the promotion')

    const loader = controlledLoader<string>()
    const herd = Array.from({ length: 500 }, () => agent.getOrLoad(hot, loader, { ttlSeconds: 60 }))
    await waitFor(() => loader.calls === 1, 'the load')
    loader.call(0).resolve('v')
    await Promise.all(herd)
    await agent.getOrLoad(cold, async () => 'c', { ttlSeconds: 60 })
    await Promise.all(Array.from({ length: 200 }, () => agent.get(coalesced)))

    clock.advance(1000)
    const client = redis().client()
    await waitFor(async () => (await reports(client, 'load-stats')).length === 1, 'the window report')
    const [report] = await reports(client, 'load-stats')
    const byKey = new Map(report?.hotKeyStats.map((stats) => [stats.key, stats]))
    // One miss for the 500 callers: they shared one load, one trip to the database.
    expect(byKey.get(hot)).toMatchObject({
      upstreamLoads: 1,
      coalescedWaiters: 499,
      misses: 1,
      timeouts: 0,
    })
    // The coalesce key's loader is Redis: one GET for the 200 reads of the absent key, and 200 misses, since each
    // caller was answered nil and goes to the database itself.
    expect(byKey.get(coalesced)).toMatchObject({ upstreamLoads: 1, coalescedWaiters: 199, misses: 200 })
    expect(byKey.has(cold)).toBe(false)
    expect([...byKey.keys()].sort()).toEqual([coalesced, hot].sort())

    // The counts belonged to that window: the next one starts from zero, and a registered key idle in it is left
    // out of the report.
    clock.advance(1000)
    await waitFor(async () => (await reports(client, 'load-stats')).length === 2, 'the next report')
    const next = (await reports(client, 'load-stats'))[1]
    expect(next?.hotKeyStats).toEqual([])
    await agent.get(coalesced)
    clock.advance(1000)
    await waitFor(async () => (await reports(client, 'load-stats')).length === 3, 'the third report')
    const third = (await reports(client, 'load-stats'))[2]
    expect(third?.hotKeyStats).toEqual([
      {
        key: coalesced,
        l1Hits: 0,
        l1Misses: 0,
        coalescedWaiters: 0,
        upstreamLoads: 1,
        staleServes: 0,
        leaseWaits: 0,
        timeouts: 0,
        misses: 1,
      },
    ])
    expect(agent.stats().stampede).toMatchObject({ calls: 501, upstreamLoads: 2, coalescedWaiters: 499 })
  })
})
