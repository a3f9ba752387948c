import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { startMonitor, waitFor } from '../support/helpers.js'

const redis = useTestRedis()
const open: Redis[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

// The smallest L1: 65,536 bytes for every reply it holds, 8,192 at most for one key's.
const MAX_BYTES = 65_536

describe("the front door's L1 byte bound", () => {
  it('keeps L1 within l1.maxBytes over many large hot values, every read still answered right', async () => {
    const { namespace, url } = redis()
    const r = new Redis(url, { heatsink: { namespace, l1: { maxTtlMs: 60_000, maxBytes: MAX_BYTES } } })
    open.push(r)
    await r.heatsink.ready()
    const keys = Array.from({ length: 80 }, (_, i) => `${namespace}:blob:${i}`)
    const blobOf = (key: string) => `${key}:`.padEnd(700, '.')
    for (const key of keys) await r.set(key, blobOf(key))
    await publishRegistry(r, createNames(namespace), ...keys.map((key) => ({ key })))
    await waitFor(() => keys.every((key) => r.heatsink.mitigation(key) === 'local_cache'), 'the promotions')
    for (let round = 0; round < 3; round++) {
      for (const key of keys) expect(await r.get(key)).toBe(blobOf(key))
    }
    const stats = r.heatsink.stats()
    expect(stats.l1Bytes).toBeGreaterThan(MAX_BYTES / 4)
    expect(stats.l1Bytes).toBeLessThanOrEqual(MAX_BYTES)
    expect(stats.l1Evictions).toBeGreaterThan(0)
    expect(stats.l1Entries).toBeLessThan(keys.length)
  })

  it('serves a hot value too large for L1 from Redis, correctly, and counts it', async () => {
    const { namespace, url } = redis()
    const r = new Redis(url, { heatsink: { namespace, l1: { maxTtlMs: 60_000, maxBytes: MAX_BYTES } } })
    open.push(r)
    await r.heatsink.ready()
    const small = `${namespace}:small`
    const large = `${namespace}:large`
    await r.set(small, 'fits')
    await r.set(large, 'L'.repeat(5000))
    await publishRegistry(r, createNames(namespace), { key: small }, { key: large })
    await waitFor(() => r.heatsink.mitigation(large) === 'local_cache', 'the promotion')
    const monitor = await startMonitor(url)
    try {
      for (let i = 0; i < 20; i++) {
        expect(await r.get(small)).toBe('fits')
        expect(await r.get(large)).toBe('L'.repeat(5000))
      }
      await monitor.sync()
      // The small key was filled once and then answered from L1; every read of the large one reached Redis.
      expect(monitor.count('get', small)).toBeLessThanOrEqual(1)
      expect(monitor.count('get', large)).toBe(20)
    } finally {
      monitor.stop()
    }
    expect(r.heatsink.stats().l1TooLarge).toBeGreaterThanOrEqual(20)
  })
})
