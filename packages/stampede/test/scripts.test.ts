import { renewLease } from '@heatsink/redis-script'
import { ManualClock } from '@heatsink/sketch'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { delAndBreakLease, delAndBreakLeases, fillChannel, setAndBreakLease } from '../src/index.js'
import { type LeaseTiming, tryLease } from '../src/lease.js'
import { keyOf, namesOf, until, useTestRedis } from './support.js'

const t = useTestRedis()
const timing = { leaseMs: 60_000, maxLeaseMs: 120_000 }
const fail = (error: unknown) => {
  throw error
}

/** Takes the lease of `key` for `owner`, failing the test when it is held. */
async function acquire(
  redis: Redis,
  key: string,
  owner: string,
  leaseTiming: LeaseTiming = timing,
  clock = new ManualClock(0),
) {
  const attempt = await tryLease(redis, target(key), owner, leaseTiming, clock, false, fail)
  if (attempt.kind !== 'acquired')
    throw new Error(`expected ${owner} to take the lease, found ${attempt.kind}`)
  return attempt.lease
}

function target(key: string) {
  const names = namesOf(t())
  return { key, leaseKey: names.leaseKey(key), channel: fillChannel(names) }
}

describe('lease scripts', () => {
  it('lets one owner take a lease, reports it held to others, and fills only while owned', async () => {
    const redis = t().client()
    const clock = new ManualClock(0)
    const key = keyOf(t(), 'k')
    const first = await tryLease(redis, target(key), 'a', timing, clock, false, fail)
    const second = await tryLease(redis, target(key), 'b', timing, clock, false, fail)
    expect(first.kind).toBe('acquired')
    expect(second).toMatchObject({ kind: 'held' })
    expect(second.kind === 'held' && second.remainingMs).toBeGreaterThan(59_000)
    if (first.kind !== 'acquired') return
    expect(await first.lease.fill('value', 10_000)).toBe(true)
    expect(await redis.get(key)).toBe('value')
    expect(await redis.exists(target(key).leaseKey)).toBe(0)
    // Peeking finds the value and leaves the lease alone.
    expect(await tryLease(redis, target(key), 'c', timing, clock, true, fail)).toEqual({
      kind: 'stored',
      stored: 'value',
    })
    expect(await redis.exists(target(key).leaseKey)).toBe(0)
  })

  it('never releases, extends or fills a lease that ran out and passed to another owner', async () => {
    const redis = t().client()
    const clock = new ManualClock(0)
    const key = keyOf(t(), 'expired')
    const short = await acquire(redis, key, 'old', { leaseMs: 50, maxLeaseMs: 50 }, clock)
    await until(async () => (await redis.exists(target(key).leaseKey)) === 0)
    const taken = await acquire(redis, key, 'new', timing, clock)

    await short.release()
    expect(await redis.get(target(key).leaseKey)).toBe(taken.token)
    expect(await renewLease(redis, target(key).leaseKey, short.token, 60_000)).toBe(false)
    expect(await short.fill('stale', 10_000)).toBe(false)
    expect(await redis.get(key)).toBeNull()
    expect(await redis.get(target(key).leaseKey)).toBe(taken.token)
    await taken.release()
    expect(await redis.exists(target(key).leaseKey)).toBe(0)
  })

  it('extends a held lease every third of its time to live', async () => {
    const redis = t().client()
    const clock = new ManualClock(0)
    const key = keyOf(t(), 'extended')
    const lease = await acquire(redis, key, 'a', { leaseMs: 3_000, maxLeaseMs: 60_000 }, clock)
    await redis.pexpire(target(key).leaseKey, 500)
    clock.advance(1_000)
    await until(async () => (await redis.pttl(target(key).leaseKey)) > 2_000)
    await lease.release()
  })
})

describe('writes that break the lease', () => {
  it('returns what SET returns, and breaks the lease so the loader cannot fill', async () => {
    const redis = t().client()
    const names = namesOf(t())
    const key = keyOf(t(), 'w')
    const loading = await acquire(redis, key, 'loader')

    expect(await setAndBreakLease(redis, names, key, 'one', 'PX', 60_000)).toBe('OK')
    expect(await redis.exists(names.leaseKey(key))).toBe(0)
    expect(await loading.fill('loaded before the write', 60_000)).toBe(false)
    expect(await redis.get(key)).toBe('one')
    expect(await setAndBreakLease(redis, names, key, 'two', 'NX')).toBeNull()
    expect(await setAndBreakLease(redis, names, key, 'three', 'GET')).toBe('one')
    expect(await redis.get(key)).toBe('three')
    expect(await redis.pttl(key)).toBe(-1)
  })

  it('deletes, breaks the lease, and announces the break on the fill channel', async () => {
    const redis = t().client()
    const listener = t().client()
    const names = namesOf(t())
    const key = keyOf(t(), 'd')
    const heard: string[] = []
    listener.on('message', (_channel: string, message: string) => heard.push(message))
    await listener.subscribe(fillChannel(names))
    await redis.set(key, 'x')
    await redis.set(names.leaseKey(key), 'someone')

    expect(await delAndBreakLease(redis, names, key)).toBe(1)
    expect(await redis.exists(key, names.leaseKey(key))).toBe(0)
    expect(await delAndBreakLease(redis, names, key)).toBe(0)
    await until(() => heard.length === 1)
    expect(heard).toEqual([key])
  })

  it('deletes several keys and breaks each lease in one script, counting as DEL does', async () => {
    const redis = t().client()
    const listener = t().client()
    const names = namesOf(t())
    const [a, b, c] = ['a', 'b', 'c'].map((name) => keyOf(t(), `multi:${name}`)) as [string, string, string]
    const heard: string[] = []
    listener.on('message', (_channel: string, message: string) => heard.push(message))
    await listener.subscribe(fillChannel(names))
    const loading = await acquire(redis, a, 'loader')
    await redis.set(a, 'x')
    await redis.set(b, 'y')

    // c is absent and b is named twice: DEL would answer 2.
    expect(await delAndBreakLeases(redis, names, [a, b, c, b])).toBe(2)
    expect(await redis.exists(a, b, names.leaseKey(a))).toBe(0)
    expect(await loading.fill('loaded before the delete', 60_000)).toBe(false)
    expect(await redis.exists(a)).toBe(0)
    await until(() => heard.length === 1)
    expect(heard).toEqual([a])
  })
})
