import { ManualClock } from '@heatsink/sketch'
import { afterEach, describe, expect, it } from 'vitest'
import { decodeEnvelope, type FetchSource } from '../src/index.js'
import { agentsOf, keyOf, seededRandom, until, useTestRedis } from './support.js'

const t = useTestRedis()
const startAgent = agentsOf(t, afterEach)
const START = 1_700_000_000_000

describe('XFetch under steady load', () => {
  it('refreshes before expiry about once per TTL, and the key never goes cold', async () => {
    const clock = new ManualClock(START)
    const { guard, redis } = await startAgent({ clock, leaseMs: 60_000, random: seededRandom(2024) })
    const key = keyOf(t(), 'homepage')
    const ttlSeconds = 10
    const loadMs = 200
    let loads = 0
    // Each load takes 200 ms of the manual clock, so XFetch's delta is 200 and reads go on during refreshes.
    const loader = () =>
      new Promise<number>((resolve) => {
        const version = ++loads
        clock.setTimeout(() => resolve(version), loadMs)
      })

    const sources = new Map<FetchSource, number>()
    let coldReads = 0
    const first = guard.fetch(key, loader, { ttlSeconds })
    await until(() => loads === 1)
    clock.advance(loadMs)
    expect(await first).toMatchObject({ value: 1, source: 'load' })
    // 60 s of a key read every 10 ms: 6,000 reads, six TTLs.
    for (let step = 0; step < 6_000; step++) {
      clock.advance(10)
      const read = guard.fetch(key, loader, { ttlSeconds })
      // A hit answers in one round trip; a read that had to wait for a load would wait for the manual clock
      // forever, so after 500 real ms it counts as cold and time moves on.
      let result = await Promise.race([
        read,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 500)),
      ])
      if (result === undefined) {
        coldReads++
        clock.advance(loadMs)
        result = await read
      }
      sources.set(result.source, (sources.get(result.source) ?? 0) + 1)
      const stored = await redis.get(key)
      const envelope = stored === null ? undefined : decodeEnvelope(stored)
      if (envelope === undefined || envelope.expiresAt <= clock.now()) coldReads++
    }
    clock.advance(loadMs)
    await guard.idle()

    expect(coldReads).toBe(0)
    expect(sources.get('hit')).toBe(6_000)
    const refreshes = loads - 1
    // One refresh per TTL (jittered ±10%, drawn a few deltas early), not XFetch's ~e per expiry without single flight.
    expect(refreshes).toBeGreaterThanOrEqual(5)
    expect(refreshes).toBeLessThanOrEqual(7)
    expect(guard.keyStats(key)).toMatchObject({ upstreamLoads: loads, backgroundRefreshes: refreshes })
    const delta = decodeEnvelope((await redis.get(key))!)?.deltaMs
    expect(delta).toBe(loadMs)
  })
})

describe('negative caching', () => {
  it('caches a "not found" for negativeTtlSeconds, tells it apart from a miss, then loads again', async () => {
    const clock = new ManualClock(START)
    const { guard, redis } = await startAgent({ clock, leaseMs: 60_000, random: seededRandom(5) })
    const key = keyOf(t(), 'user:deleted')
    let calls = 0
    const loader = async () => {
      calls++
      return undefined
    }
    const options = { ttlSeconds: 300, negativeTtlSeconds: 5 }

    for (let i = 0; i < 50; i++) expect(await guard.getOrLoad(key, loader, options)).toBeUndefined()
    const herd = await Promise.all(Array.from({ length: 500 }, () => guard.getOrLoad(key, loader, options)))
    expect(herd.every((value) => value === undefined)).toBe(true)
    expect(calls).toBe(1)
    const stored = decodeEnvelope((await redis.get(key))!)
    expect(stored).toMatchObject({ kind: 'u', payload: '' })
    expect(await redis.pttl(key)).toBeLessThanOrEqual(5_500)

    clock.advance(4_000)
    await guard.getOrLoad(key, loader, options)
    expect(calls).toBe(1)
    clock.advance(1_600) // past 5 s + 10% jitter
    await guard.getOrLoad(key, loader, options)
    expect(calls).toBe(2)
  })

  it('returns null as null, and a stored null is a hit, not a miss', async () => {
    const clock = new ManualClock(START)
    const { guard } = await startAgent({ clock, leaseMs: 60_000 })
    const key = keyOf(t(), 'order:none')
    let calls = 0
    const loader = async () => {
      calls++
      return null
    }
    expect(await guard.getOrLoad(key, loader, { ttlSeconds: 60 })).toBeNull()
    expect(await guard.fetch(key, loader, { ttlSeconds: 60 })).toMatchObject({ value: null, source: 'hit' })
    expect(calls).toBe(1)
  })

  it('caches nothing with negativeTtlSeconds 0', async () => {
    const clock = new ManualClock(START)
    const { guard, redis } = await startAgent({ clock, leaseMs: 60_000 })
    const key = keyOf(t(), 'sku:none')
    let calls = 0
    const loader = async () => {
      calls++
      return undefined
    }
    await guard.getOrLoad(key, loader, { ttlSeconds: 60, negativeTtlSeconds: 0 })
    await guard.getOrLoad(key, loader, { ttlSeconds: 60, negativeTtlSeconds: 0 })
    expect(calls).toBe(2)
    expect(await redis.exists(key)).toBe(0)
  })
})

describe('TTL jitter', () => {
  it('spreads the written TTLs within ±10% of the base', async () => {
    const clock = new ManualClock(START)
    const { guard, redis } = await startAgent({ clock, leaseMs: 60_000 })
    const keys = Array.from({ length: 300 }, (_, i) => keyOf(t(), `item:${i}`))
    await Promise.all(
      keys.map((key) => guard.getOrLoad(key, async () => key, { ttlSeconds: 100, staleSeconds: 20 })),
    )
    const pttls = await Promise.all(keys.map((key) => redis.pttl(key)))
    const base = 120_000
    // A few ms may pass between the write and the PTTL.
    expect(Math.min(...pttls)).toBeGreaterThanOrEqual(base * 0.9 - 1_000)
    expect(Math.max(...pttls)).toBeLessThanOrEqual(base * 1.1)
    // Spread, not clustered: both outer fifths of the range are used.
    expect(Math.min(...pttls)).toBeLessThan(base * 0.94)
    expect(Math.max(...pttls)).toBeGreaterThan(base * 1.06)
    const logical = await Promise.all(
      keys.map(async (key) => decodeEnvelope((await redis.get(key))!)!.expiresAt - START),
    )
    expect(Math.min(...logical)).toBeGreaterThanOrEqual(90_000)
    expect(Math.max(...logical)).toBeLessThanOrEqual(110_000)
  })

  it('writes the exact TTL with jitter 0', async () => {
    const clock = new ManualClock(START)
    const { guard, redis } = await startAgent({ clock, leaseMs: 60_000 })
    const keys = Array.from({ length: 20 }, (_, i) => keyOf(t(), `exact:${i}`))
    await Promise.all(keys.map((key) => guard.getOrLoad(key, async () => 1, { ttlSeconds: 100, jitter: 0 })))
    for (const pttl of await Promise.all(keys.map((key) => redis.pttl(key)))) {
      expect(pttl).toBeGreaterThan(99_000)
      expect(pttl).toBeLessThanOrEqual(100_000)
    }
  })
})
