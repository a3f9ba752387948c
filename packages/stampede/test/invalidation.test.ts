import { ManualClock } from '@heatsink/sketch'
import { afterEach, describe, expect, it } from 'vitest'
import { delAndBreakLeases } from '../src/index.js'
import { agentsOf, controlledLoader, keyOf, namesOf, seededRandom, until, useTestRedis } from './support.js'

const t = useTestRedis()
const startAgent = agentsOf(t, afterEach)
const options = { ttlSeconds: 60 }

async function twoAgents() {
  const clock = new ManualClock(1_700_000_000_000)
  const loading = await startAgent({ clock, leaseMs: 60_000, random: seededRandom(1) }, 'loading')
  const writing = await startAgent({ clock, leaseMs: 60_000, random: seededRandom(2) }, 'writing')
  return { clock, loading, writing }
}

describe('invalidation while a load is in flight', () => {
  it('caches nothing of a load overtaken by a local invalidation, and later callers load anew', async () => {
    const { loading } = await twoAgents()
    const { guard, redis } = loading
    const key = keyOf(t(), 'price')
    const loader = controlledLoader<number>()

    const before = guard.fetch(key, loader, options)
    await until(() => loader.calls === 1)
    guard.invalidate(key)
    const after = guard.fetch(key, loader, options)
    await until(() => loader.calls === 2)

    // The overtaken load finishes first: it must not land, even for a moment.
    loader.call(0).resolve(100)
    const old = await before
    expect(old.value).toBe(100)
    expect(guard.isCurrent(key, old.generation)).toBe(false)
    expect(await redis.get(key)).toBeNull()

    loader.call(1).resolve(120)
    const fresh = await after
    expect(fresh).toMatchObject({ value: 120, source: 'load' })
    expect(guard.isCurrent(key, fresh.generation)).toBe(true)
    expect(await redis.get(key)).toContain('120')
    expect(await guard.getOrLoad(key, loader, options)).toBe(120)
    expect(loader.calls).toBe(2)
  })

  it("refuses the fill of a load that another agent's write overtook (setAndBreakLease)", async () => {
    const { loading, writing } = await twoAgents()
    const key = keyOf(t(), 'stock')
    const loader = controlledLoader<number>()

    const inFlight = loading.guard.fetch(key, loader, options)
    await until(() => loader.calls === 1)
    // The write goes through the other agent; the loading agent hears nothing of it (no invalidation message).
    expect(await writing.guard.set(key, JSON.stringify(7), 'EX', 60)).toBe('OK')
    expect(await writing.redis.exists(namesOf(t()).leaseKey(key))).toBe(0)

    loader.call(0).resolve(9)
    const overtaken = await inFlight
    expect(overtaken.value).toBe(9)
    // Redis keeps the write, and the generation tells the agent not to put 9 in L1 either.
    expect(await writing.redis.get(key)).toBe('7')
    expect(loading.guard.isCurrent(key, overtaken.generation)).toBe(false)
    expect(await loading.guard.fetch(key, loader, options)).toMatchObject({ value: 7, source: 'hit' })
    expect(await writing.guard.getOrLoad(key, loader, options)).toBe(7)
    expect(loader.calls).toBe(1)
  })

  it('refuses the fill of a load that a plain write by any client overtook, lease or no lease broken', async () => {
    const { loading, writing } = await twoAgents()
    const key = keyOf(t(), 'price')
    const loader = controlledLoader<number>()
    const leaseKey = namesOf(t()).leaseKey(key)

    const inFlight = loading.guard.fetch(key, loader, options)
    await until(() => loader.calls === 1)
    // A client that knows nothing of Heatsink: a plain SET, and the lease left standing.
    expect(await writing.redis.set(key, 'written by redis-cli')).toBe('OK')
    expect(await writing.redis.exists(leaseKey)).toBe(1)

    loader.call(0).resolve(9)
    expect((await inFlight).value).toBe(9)
    // The fill saw the key changed since its lease was taken: Redis keeps the write, and the lease is gone.
    expect(await writing.redis.get(key)).toBe('written by redis-cli')
    expect(await writing.redis.exists(leaseKey)).toBe(0)
  })

  it('refuses the fill of a load that a delete overtook (delAndBreakLease); the next caller loads anew', async () => {
    const { clock, loading, writing } = await twoAgents()
    const key = keyOf(t(), 'profile')
    await writing.guard.getOrLoad(key, async () => 'v1', { ttlSeconds: 10, jitter: 0 })
    clock.advance(10_000)
    const loader = controlledLoader<string>()

    const inFlight = loading.guard.fetch(key, loader, options)
    await until(() => loader.calls === 1)
    expect(await writing.guard.del(key)).toBe(1)

    loader.call(0).resolve('read before the delete')
    const overtaken = await inFlight
    expect(overtaken.value).toBe('read before the delete')
    expect(loading.guard.isCurrent(key, overtaken.generation)).toBe(false)
    expect(await writing.redis.exists(key, namesOf(t()).leaseKey(key))).toBe(0)

    const next = loading.guard.getOrLoad(key, loader, options)
    await until(() => loader.calls === 2)
    loader.call(1).resolve('after the delete')
    expect(await next).toBe('after the delete')
    expect(await writing.guard.getOrLoad(key, loader, options)).toBe('after the delete')
    expect(loader.calls).toBe(2)
  })

  it('invalidateAll detaches every load in flight: nothing is cached and the leases are released', async () => {
    const { loading } = await twoAgents()
    const { guard, redis } = loading
    const keys = [keyOf(t(), 'all:1'), keyOf(t(), 'all:2')]
    const loaders = keys.map(() => controlledLoader<string>())
    const inFlight = keys.map((key, i) => guard.fetch(key, loaders[i]!, options))
    await until(() => loaders.every((loader) => loader.calls === 1))

    guard.invalidateAll()
    await until(async () => (await redis.exists(...keys.map((key) => namesOf(t()).leaseKey(key)))) === 0)
    for (const [i, loader] of loaders.entries()) loader.call(0).resolve(`old ${i}`)
    const results = await Promise.all(inFlight)
    expect(results.map((result, i) => guard.isCurrent(keys[i]!, result.generation))).toEqual([false, false])
    expect(await redis.exists(...keys)).toBe(0)

    // A caller after the invalidation starts a new load, whose result is cached.
    const next = guard.getOrLoad(keys[0]!, loaders[0]!, options)
    await until(() => loaders[0]!.calls === 2)
    loaders[0]!.call(1).resolve('new')
    expect(await next).toBe('new')
    expect(await redis.get(keys[0]!)).toContain('"new"')
  })

  it('delAndBreakLeases breaks every lease, so no load in flight fills any of the keys', async () => {
    const { loading, writing } = await twoAgents()
    const keys = [keyOf(t(), 'del:1'), keyOf(t(), 'del:2')] as const
    const loaders = keys.map(() => controlledLoader<string>())
    const inFlight = keys.map((key, i) => loading.guard.fetch(key, loaders[i]!, options))
    await until(() => loaders.every((loader) => loader.calls === 1))

    expect(await delAndBreakLeases(writing.redis, namesOf(t()), keys)).toBe(0)
    for (const loader of loaders) loader.call(0).resolve('read before the delete')
    const results = await Promise.all(inFlight)
    expect(results.every((result, i) => !loading.guard.isCurrent(keys[i]!, result.generation))).toBe(true)
    expect(await writing.redis.exists(...keys)).toBe(0)
  })
})
