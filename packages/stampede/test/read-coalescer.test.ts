import { ManualClock } from '@heatsink/sketch'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { coalesceReads, ReadCoalescer } from '../src/index.js'
import { agentsOf, deferred, keyOf, useTestRedis } from './support.js'

const t = useTestRedis()
const startAgent = agentsOf(t, afterEach)

describe('coalesceReads', () => {
  it('turns a herd of identical GETs into one Redis read', async () => {
    const redis = t().client()
    const key = keyOf(t(), 'hot')
    await redis.set(key, 'value')
    const get = vi.spyOn(redis, 'get')
    const reads = coalesceReads(redis)

    const values = await Promise.all(Array.from({ length: 5_000 }, () => reads.get(key)))
    expect(values.every((value) => value === 'value')).toBe(true)
    expect(get).toHaveBeenCalledTimes(1)
    expect(reads.takeJoined()).toBe(4_999)
    // Settled reads are not reused: the next one goes to Redis.
    await reads.get(key)
    expect(get).toHaveBeenCalledTimes(2)
  })

  it('does not let a caller after a write join a read sent before it', async () => {
    const pending = [deferred<string>(), deferred<string>()]
    let calls = 0
    const reads = new ReadCoalescer((_key: string) => pending[calls++]!.promise)
    const before = reads.get('k')
    reads.invalidate('k')
    const after = reads.get('k')
    expect(calls).toBe(2)
    pending[0]!.resolve('old')
    pending[1]!.resolve('new')
    expect(await before).toBe('old')
    expect(await after).toBe('new')
  })

  it("shares the guard's generations, so guard.invalidate detaches reads in flight too", async () => {
    const { guard, redis } = await startAgent({ clock: new ManualClock(0) })
    const key = keyOf(t(), 'shared')
    const get = vi.spyOn(redis, 'get')
    const reads = coalesceReads(redis, guard.generations)
    const first = reads.get(key)
    guard.invalidate(key)
    const second = reads.get(key)
    await Promise.all([first, second])
    expect(get).toHaveBeenCalledTimes(2)
  })
})
