import { ManualClock } from '@heatsink/sketch'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { GuardClosedError, InvalidStampedeOptionError, LoadTimeoutError } from '../src/index.js'
import { agentsOf, controlledLoader, keyOf, namesOf, seededRandom, until, useTestRedis } from './support.js'

const t = useTestRedis()
const startAgent = agentsOf(t, afterEach)
// Lease times are real (Redis expires them); long ones keep them out of tests driven by a manual clock.
const base = { leaseMs: 60_000, random: seededRandom(7) }

describe('coalescing within one guard', () => {
  it('makes one loader call for 10,000 concurrent calls on a cold key, and gives every caller its value', async () => {
    const clock = new ManualClock(1_700_000_000_000)
    const { guard, redis } = await startAgent({ ...base, clock })
    const key = keyOf(t(), 'product:1')
    const loader = controlledLoader<{ id: number }>()
    const get = vi.spyOn(redis, 'get')

    const calls = Array.from({ length: 10_000 }, () => guard.fetch(key, loader, { ttlSeconds: 60 }))
    await until(() => loader.calls > 0)
    loader.call(0).resolve({ id: 1 })
    const results = await Promise.all(calls)

    expect(loader.calls).toBe(1)
    expect(results.every((result) => result.value.id === 1 && result.source === 'load')).toBe(true)
    // One flight in the process: one read of Redis, and no caller queued on the lease.
    expect(get).toHaveBeenCalledTimes(1)
    expect(guard.keyStats(key)).toMatchObject({
      upstreamLoads: 1,
      coalescedWaiters: 9_999,
      leaseWaits: 0,
      timeouts: 0,
    })
    // The next call is a hit on what the flight stored.
    expect(await guard.fetch(key, loader, { ttlSeconds: 60 })).toMatchObject({
      value: { id: 1 },
      source: 'hit',
    })
    expect(loader.calls).toBe(1)
  })

  it("gives every waiter the loader's error once, releases the lease, and loads again on the next call", async () => {
    const clock = new ManualClock(1_700_000_000_000)
    const { guard, redis } = await startAgent({ ...base, clock })
    const key = keyOf(t(), 'product:2')
    const loader = controlledLoader<string>()
    const failure = new Error('database down')

    const calls = Array.from({ length: 1_000 }, () =>
      guard.getOrLoad(key, loader, { ttlSeconds: 60 }).then(
        () => undefined,
        (error: unknown) => error,
      ),
    )
    await until(() => loader.calls > 0)
    loader.call(0).reject(failure)
    const errors = await Promise.all(calls)

    expect(loader.calls).toBe(1)
    expect(errors.every((error) => error === failure)).toBe(true)
    expect(await redis.exists(key, namesOf(t()).leaseKey(key))).toBe(0)

    const again = guard.getOrLoad(key, loader, { ttlSeconds: 60 })
    await until(() => loader.calls > 1)
    loader.call(1).resolve('recovered')
    expect(await again).toBe('recovered')
    expect(loader.calls).toBe(2)
  })

  it('times a waiter out with LoadTimeoutError at maxWaitMs while the leader completes and caches', async () => {
    const clock = new ManualClock(1_700_000_000_000)
    const { guard, redis } = await startAgent({ ...base, clock })
    const key = keyOf(t(), 'product:3')
    const loader = controlledLoader<string>()

    const leader = guard.fetch(key, loader, { ttlSeconds: 60, maxWaitMs: 1_000 })
    await until(() => loader.calls > 0)
    const impatient = guard
      .getOrLoad(key, loader, { ttlSeconds: 60, maxWaitMs: 100 })
      .catch((error: unknown) => error)
    const patient = guard.getOrLoad(key, loader, { ttlSeconds: 60, maxWaitMs: 5_000 })

    clock.advance(100)
    const error = await impatient
    expect(error).toBeInstanceOf(LoadTimeoutError)
    expect(error).toMatchObject({ code: 'E_LOAD_TIMEOUT', key, waitedMs: 100 })

    loader.call(0).resolve('fresh')
    expect(await leader).toMatchObject({ value: 'fresh', source: 'load' })
    expect(await patient).toBe('fresh')
    expect(await redis.get(key)).toContain('"fresh"')
    expect(guard.keyStats(key)).toMatchObject({ timeouts: 1, upstreamLoads: 1 })
  })

  it('serves a waiter its stale fallback at maxWaitMs, and the leader still caches', async () => {
    const clock = new ManualClock(1_700_000_000_000)
    const { guard } = await startAgent({ ...base, clock })
    const key = keyOf(t(), 'product:4')
    const loader = controlledLoader<string>()

    const leader = guard.getOrLoad(key, loader, { ttlSeconds: 60, maxWaitMs: 10_000 })
    await until(() => loader.calls > 0)
    const waiter = guard.fetch(key, loader, {
      ttlSeconds: 60,
      maxWaitMs: 250,
      fallback: () => ({ value: 'from expired L1' }),
    })
    clock.advance(250)
    expect(await waiter).toMatchObject({ value: 'from expired L1', source: 'fallback' })

    loader.call(0).resolve('fresh')
    expect(await leader).toBe('fresh')
    expect(await guard.fetch(key, loader, { ttlSeconds: 60 })).toMatchObject({
      value: 'fresh',
      source: 'hit',
    })
    expect(guard.keyStats(key)).toMatchObject({ timeouts: 1, staleServes: 1, upstreamLoads: 1 })
  })

  it('times out every waiter even when the leader never finishes', async () => {
    const clock = new ManualClock(1_700_000_000_000)
    const { guard } = await startAgent({ ...base, clock })
    const key = keyOf(t(), 'product:5')
    const loader = controlledLoader<string>()
    const calls = [100, 200, 300, 200, 100].map((maxWaitMs) =>
      guard.getOrLoad(key, loader, { ttlSeconds: 60, maxWaitMs }).then(
        () => undefined,
        (error: unknown) => error as LoadTimeoutError,
      ),
    )
    await until(() => loader.calls > 0)
    clock.advance(300)
    const errors = await Promise.all(calls)
    expect(errors.map((error) => error?.waitedMs)).toEqual([100, 200, 300, 200, 100])
    expect(guard.keyStats(key)?.timeouts).toBe(5)
  })
})

describe('guard lifecycle and options', () => {
  it('rejects options out of range with InvalidStampedeOptionError', async () => {
    const { guard } = await startAgent({ ...base, clock: new ManualClock(0) })
    const key = keyOf(t(), 'bad')
    const load = async () => 1
    await expect(guard.getOrLoad(key, load, { ttlSeconds: 0 })).rejects.toMatchObject({
      code: 'E_INVALID_STAMPEDE_OPTION',
      option: 'ttlSeconds',
    })
    await expect(guard.getOrLoad(key, load, { ttlSeconds: 1, jitter: 1 })).rejects.toBeInstanceOf(
      InvalidStampedeOptionError,
    )
  })

  it('on close, rejects waiting callers with GuardClosedError and releases the leases it holds', async () => {
    const { guard, redis } = await startAgent({ ...base, clock: new ManualClock(0) })
    const key = keyOf(t(), 'closing')
    const loader = controlledLoader<string>()
    const waiting = guard.getOrLoad(key, loader, { ttlSeconds: 60 }).catch((error: unknown) => error)
    await until(() => loader.calls === 1)
    expect(await redis.exists(namesOf(t()).leaseKey(key))).toBe(1)

    await guard.close()
    expect(await waiting).toBeInstanceOf(GuardClosedError)
    expect(await redis.exists(namesOf(t()).leaseKey(key))).toBe(0)
    await expect(guard.getOrLoad(key, loader, { ttlSeconds: 60 })).rejects.toMatchObject({
      code: 'E_GUARD_CLOSED',
    })
    // The loader finishing later stores nothing.
    loader.call(0).resolve('late')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await redis.exists(key)).toBe(0)
  })
})
