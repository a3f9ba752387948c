import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { acquireLease, claimLease, releaseLease, renewLease } from '../src/index.js'

const t = useTestRedis()

describe('the Redis lease', () => {
  it('is taken once: a second acquirer is refused while the first holds it', async () => {
    const redis = t().client()
    const key = `${t().namespace}:lease:acquire`
    expect(await acquireLease(redis, key, 'a', 60_000)).toBe(true)
    expect(await acquireLease(redis, key, 'b', 60_000)).toBe(false)
    expect(await redis.get(key)).toBe('a')
    expect(await redis.pttl(key)).toBeGreaterThan(50_000)
  })

  it('is renewed and released only by its holder', async () => {
    const redis = t().client()
    const key = `${t().namespace}:lease:holder`
    await acquireLease(redis, key, 'a', 1_000)
    expect(await renewLease(redis, key, 'b', 60_000)).toBe(false)
    expect(await redis.pttl(key)).toBeLessThanOrEqual(1_000)
    expect(await renewLease(redis, key, 'a', 60_000)).toBe(true)
    expect(await redis.pttl(key)).toBeGreaterThan(50_000)
    expect(await releaseLease(redis, key, 'b')).toBe(false)
    expect(await redis.get(key)).toBe('a')
    expect(await releaseLease(redis, key, 'a')).toBe(true)
    expect(await redis.exists(key)).toBe(0)
  })

  it('is never renewed or released once it expired and passed to another', async () => {
    const redis = t().client()
    const key = `${t().namespace}:lease:passed`
    await acquireLease(redis, key, 'old', 60_000)
    await redis.del(key)
    await acquireLease(redis, key, 'new', 60_000)
    expect(await renewLease(redis, key, 'old', 120_000)).toBe(false)
    expect(await releaseLease(redis, key, 'old')).toBe(false)
    expect(await redis.get(key)).toBe('new')
  })

  it('is claimed when free, renewed by a claim of its holder, and refused to another claimant', async () => {
    const redis = t().client()
    const key = `${t().namespace}:lease:claim`
    expect(await claimLease(redis, key, 'a', 1_000)).toBe(true)
    expect(await claimLease(redis, key, 'b', 60_000)).toBe(false)
    expect(await claimLease(redis, key, 'a', 60_000)).toBe(true)
    expect(await redis.pttl(key)).toBeGreaterThan(50_000)
    expect(await redis.get(key)).toBe('a')
  })
})
