import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'

const redis = useTestRedis()
const open: Redis[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

const SAMPLES = 200
// The documented bound (docs/architecture.md): one delivery of Redis's tracking invalidation. Asserted on the
// 99th percentile with room for a shared, noisy machine (one sample in a hundred may meet a pause of the machine's);
// no sample may take ten times that. The measured figures are printed.
const BOUND_MS = 100
const WORST_MS = 10 * BOUND_MS

describe('a write by another, plain client', () => {
  it(`is seen through L1 within the delivery of one tracking message (${SAMPLES} writes)`, async () => {
    const { namespace, url } = redis()
    const key = `${namespace}:config`
    const r = new Redis(url, { heatsink: { namespace, l1: { maxTtlMs: 60_000 } } })
    open.push(r)
    const plain = redis().client()
    await r.heatsink.ready()
    await plain.hset(key, 'version', '0')
    await publishRegistry(plain, createNames(namespace), { key })
    await waitFor(() => r.heatsink.mitigation(key) === 'local_cache', 'the promotion')

    const lags: number[] = []
    for (let i = 1; i <= SAMPLES; i++) {
      // L1 holds the old reply before each write, so only an invalidation can explain the new one.
      await waitFor(async () => {
        const hits = r.heatsink.stats().l1Hits
        await r.hgetall(key)
        return r.heatsink.stats().l1Hits > hits
      }, 'an L1 hit')
      await plain.hset(key, 'version', String(i))
      const written = performance.now()
      for (;;) {
        const { version } = await r.hgetall(key)
        if (version === String(i)) break
        expect(performance.now() - written).toBeLessThan(WORST_MS)
      }
      lags.push(performance.now() - written)
    }
    lags.sort((a, b) => a - b)
    const p50 = lags[Math.floor(SAMPLES * 0.5)] as number
    const p99 = lags[Math.floor(SAMPLES * 0.99)] as number
    console.log(
      `other writer seen after: p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms (${SAMPLES} writes)`,
    )
    expect(p99).toBeLessThan(BOUND_MS)
  })
})
