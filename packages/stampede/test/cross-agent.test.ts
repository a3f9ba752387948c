import { ManualClock, systemClock } from '@heatsink/sketch'
import { afterEach, describe, expect, it } from 'vitest'
import { createStampedeGuard, type Fetched, fillChannel } from '../src/index.js'
import { agentsOf, controlledLoader, keyOf, namesOf, seededRandom, until, useTestRedis } from './support.js'

const t = useTestRedis()
const startAgent = agentsOf(t, afterEach)
const START = 1_700_000_000_000

describe('coalescing across agents', () => {
  it('makes one loader call across 8 agents x 1,000 concurrent callers on an expired key', async () => {
    // A manual clock that never moves during the wait: the seven waiting agents can only learn of the fill
    // through the pub/sub announcement, not by polling.
    const clock = new ManualClock(START)
    const agents = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        startAgent({ clock, leaseMs: 60_000, random: seededRandom(i + 1) }, `agent-${i}`),
      ),
    )
    const key = keyOf(t(), 'home')
    const first = agents[0]!.guard
    expect(await first.getOrLoad(key, async () => 'v1', { ttlSeconds: 10, jitter: 0 })).toBe('v1')
    clock.advance(10_000)

    const loader = controlledLoader<string>()
    const calls: Promise<Fetched<string>>[] = []
    for (const { guard } of agents) {
      for (let i = 0; i < 1_000; i++) calls.push(guard.fetch(key, loader, { ttlSeconds: 10 }))
    }
    await until(
      () => loader.calls === 1 && agents.filter((a) => a.guard.keyStats(key)?.leaseWaits === 1).length === 7,
    )
    loader.call(0).resolve('v2')
    const results = await Promise.all(calls)

    expect(loader.calls).toBe(1)
    expect(results.every((result) => result.value === 'v2')).toBe(true)
    expect(results.filter((result) => result.source === 'load')).toHaveLength(1_000)
    expect(results.filter((result) => result.source === 'peer')).toHaveLength(7_000)
    const stats = agents.map((agent) => agent.guard.takeWindowStats().get(key)!)
    const loads = stats.reduce((sum, s) => sum + s.upstreamLoads, 0)
    const waiters = stats.reduce((sum, s) => sum + s.coalescedWaiters, 0)
    expect(loads).toBe(2) // v1's load, then the one reload
    // Collapse ratio of the reload: (waiters + loads) / loads = 8,000 callers per load.
    expect(waiters).toBe(7_999)
  })

  it('replaces a lease holder that dies mid-load within the lease time to live', async () => {
    const leaseMs = 300
    const names = namesOf(t())
    const key = keyOf(t(), 'report')
    const dying = await startAgent({ clock: systemClock, leaseMs, pollMs: 10 }, 'dying')
    const survivor = await startAgent({ clock: systemClock, leaseMs, pollMs: 10 }, 'survivor')

    const hung = controlledLoader<string>()
    const orphan = dying.guard.getOrLoad(key, hung, { ttlSeconds: 60, maxWaitMs: 30_000 }).catch(() => 'gone')
    await until(() => hung.calls === 1)
    const loader = controlledLoader<string>()
    const waiting = survivor.guard.getOrLoad(key, loader, { ttlSeconds: 60, maxWaitMs: 30_000 })
    await until(() => survivor.guard.keyStats(key)?.leaseWaits === 1)
    // Let at least one extension happen, so the lease is known to outlive its first term while the holder lives.
    await new Promise((resolve) => setTimeout(resolve, leaseMs * 1.5))
    expect(loader.calls).toBe(0)
    expect(await survivor.redis.get(names.leaseKey(key))).toMatch(/^dying:/)

    // The process dies: its connections drop, nothing is released, extensions stop reaching Redis.
    const diedAt = Date.now()
    dying.redis.disconnect()
    dying.subscriber.disconnect()
    await until(() => loader.calls === 1, 5_000)
    const takeoverMs = Date.now() - diedAt
    expect(takeoverMs).toBeLessThanOrEqual(leaseMs + 100)
    expect(await survivor.redis.get(names.leaseKey(key))).toMatch(/^survivor:/)

    loader.call(0).resolve('rebuilt')
    expect(await waiting).toBe('rebuilt')
    hung.call(0).resolve('late')
    expect(await orphan).toBe('late')
    expect(await survivor.redis.get(key)).toContain('"rebuilt"')
  })

  it('never lets a former owner release or fill a lease that outlived its time to live', async () => {
    const names = namesOf(t())
    const key = keyOf(t(), 'slow')
    const leaseKey = names.leaseKey(key)
    // Two slow holders in turn, whose clocks never move, so they never extend: each 150 ms lease runs out.
    const failing = await startAgent({ clock: new ManualClock(START), leaseMs: 150 }, 'failing')
    const finishing = await startAgent({ clock: new ManualClock(START), leaseMs: 150 }, 'finishing')
    const next = await startAgent({ clock: systemClock, leaseMs: 60_000 }, 'next')
    const leaseGone = () => until(async () => (await next.redis.exists(leaseKey)) === 0)

    const failingLoader = controlledLoader<string>()
    const failingCall = failing.guard.getOrLoad(key, failingLoader, { ttlSeconds: 60, maxWaitMs: 60_000 })
    await until(() => failingLoader.calls === 1)
    await leaseGone()
    const finishingLoader = controlledLoader<string>()
    const finishingCall = finishing.guard.fetch(key, finishingLoader, { ttlSeconds: 60, maxWaitMs: 60_000 })
    await until(() => finishingLoader.calls === 1)
    await leaseGone()
    const nextLoader = controlledLoader<string>()
    const nextCall = next.guard.getOrLoad(key, nextLoader, { ttlSeconds: 60 })
    await until(() => nextLoader.calls === 1)
    const nextToken = await next.redis.get(leaseKey)
    expect(nextToken).toMatch(/^next:/)

    // The first former owner fails and releases; the second finishes and fills. Neither touches the new lease.
    failingLoader.call(0).reject(new Error('query timed out'))
    await expect(failingCall).rejects.toThrow('query timed out')
    finishingLoader.call(0).resolve('outdated')
    const finished = await finishingCall
    expect(finished.value).toBe('outdated')
    expect(finishing.guard.isCurrent(key, finished.generation)).toBe(false)
    expect(await next.redis.get(leaseKey)).toBe(nextToken)
    expect(await next.redis.pttl(leaseKey)).toBeGreaterThan(50_000)
    expect(await next.redis.get(key)).toBeNull()

    nextLoader.call(0).resolve('current')
    expect(await nextCall).toBe('current')
    expect(await next.redis.get(key)).toContain('"current"')
  })

  it('serves a stale value at once and runs exactly one background refresh across four agents', async () => {
    const clock = new ManualClock(START)
    const agents = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        startAgent({ clock, leaseMs: 60_000, random: seededRandom(i + 11) }, `a${i}`),
      ),
    )
    const key = keyOf(t(), 'feed')
    const options = { ttlSeconds: 10, staleSeconds: 60 }
    await agents[0]!.guard.getOrLoad(key, async () => 'old', options)
    clock.advance(15_000)

    const loader = controlledLoader<string>()
    const served = await Promise.all(
      agents.flatMap(({ guard }) => Array.from({ length: 100 }, () => guard.fetch(key, loader, options))),
    )
    // All 400 callers were answered while the refresh had not finished.
    expect(served.every((result) => result.value === 'old' && result.source === 'stale')).toBe(true)
    await until(() => loader.calls === 1)
    const bystanders = agents.filter((agent) => agent.guard.keyStats(key)?.backgroundRefreshes !== 1)
    expect(bystanders).toHaveLength(3)
    await Promise.all(bystanders.map((agent) => agent.guard.idle()))

    loader.call(0).resolve('new')
    await Promise.all(agents.map((agent) => agent.guard.idle()))
    expect(loader.calls).toBe(1)
    for (const { guard } of agents) {
      expect(await guard.fetch(key, loader, options)).toMatchObject({ value: 'new', source: 'hit' })
    }
    const staleServes = agents.reduce((sum, agent) => sum + (agent.guard.keyStats(key)?.staleServes ?? 0), 0)
    expect(staleServes).toBe(400)
  })

  it("wakes a waiter through onFillMessage when the owner's own subscriber carries the fill channel", async () => {
    // subscriber: false, as the agent makes its guard: the test's connection stands in for the agent's subscriber.
    const clock = new ManualClock(START)
    const names = namesOf(t())
    const listener = t().client()
    const guards = ['owner-a', 'owner-b'].map((agentId) =>
      createStampedeGuard({ redis: t().client(), subscriber: false, names, agentId, clock, leaseMs: 60_000 }),
    )
    try {
      listener.on('message', (_channel: string, key: string) => {
        for (const guard of guards) guard.onFillMessage(key)
      })
      await listener.subscribe(fillChannel(names))
      await Promise.all(guards.map((guard) => guard.ready()))
      const [loading, waiting] = guards as [(typeof guards)[0], (typeof guards)[0]]
      const key = keyOf(t(), 'fed')
      const loader = controlledLoader<string>()
      const first = loading.getOrLoad(key, loader, { ttlSeconds: 60 })
      await until(() => loader.calls === 1)
      const second = waiting.fetch(key, loader, { ttlSeconds: 60 })
      await until(() => waiting.keyStats(key)?.leaseWaits === 1)

      // The clock never moves, so only the forwarded announcement can end the wait.
      loader.call(0).resolve('v')
      expect(await first).toBe('v')
      expect(await second).toMatchObject({ value: 'v', source: 'peer' })
      expect(loader.calls).toBe(1)
      expect(waiting.takeWindowStats().get(key)).toMatchObject({ leaseWaits: 1, coalescedWaiters: 1 })
      // Totals outlive the window they were counted in.
      expect(waiting.totals()).toMatchObject({ leaseWaits: 1, coalescedWaiters: 1, upstreamLoads: 0 })
      expect(loading.totals()).toMatchObject({ upstreamLoads: 1 })
    } finally {
      await Promise.all(guards.map((guard) => guard.close()))
    }
  })
})
