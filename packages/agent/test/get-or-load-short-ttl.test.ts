import { createNames } from '@heatsink/protocol'
import { testNamespace, usePrivateRedis } from '@heatsink/test'
import { Redis as PlainRedis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from '../src/index.js'
import { DEFAULT_TTL_FRACTION } from '../src/options/resolve-options.js'
import { publishRegistry } from '../src/testing.js'
import { startMonitor, waitFor } from './support/helpers.js'

// Counts commands with MONITOR: a private server, so no other file's traffic is counted or slowed.
const redis = usePrivateRedis()
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

const READERS = 16
const RUN_MS = 6000
// What the L1 rules allow: one refill per L1 lifetime, and per logical TTL a reload ahead of expiry (the lease's
// read, the refill after its write). Measured: 1.5 to 1.7 GETs per lifetime; 1.8 before the reload took the place of
// the last refresh and stopped reading the key first; about 8 before refills kept their lifetime, misses refilled
// before asking the guard and the guard refreshed ahead (7.9 with a 3 s TTL, 6.5 with 1 s).
const READS_PER_LIFETIME = 2.5

// READERS readers of a promoted key through getOrLoad (a 50 ms loader) for `runMs`, counted by MONITOR.
async function readHotKey(ttlSeconds: number, runMs = RUN_MS) {
  const namespace = testNamespace()
  const admin = new PlainRedis(redis().url)
  open.push({ close: () => admin.disconnect() })
  const agent = createAgent({ redis: redis().url, namespace })
  open.push({ close: () => agent.close() })
  await agent.ready()
  const key = `${namespace}:flags`
  await publishRegistry(admin, createNames(namespace), { key })
  await waitFor(() => agent.mitigation(key) === 'local_cache', 'the promotion')
  const loader = async () => {
    await new Promise((resolve) => setTimeout(resolve, 50))
    return { on: true }
  }
  expect(await agent.getOrLoad(key, loader, { ttlSeconds })).toEqual({ on: true })
  const monitor = await startMonitor(redis().url)
  open.push({ close: () => monitor.stop() })
  const started = performance.now()
  const until = started + runMs
  let reads = 0
  await Promise.all(
    Array.from({ length: READERS }, async () => {
      while (performance.now() < until) {
        expect(await agent.getOrLoad(key, loader, { ttlSeconds })).toEqual({ on: true })
        reads++
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    }),
  )
  const elapsed = performance.now() - started
  await monitor.sync()
  return { agent, key, monitor, reads, elapsed }
}

describe('getOrLoad of a hot local_cache key with a short TTL', () => {
  for (const ttlSeconds of [3, 1]) {
    it(`reads Redis about once per L1 lifetime (${READERS} concurrent readers, ${ttlSeconds} s TTL)`, async () => {
      const { agent, key, monitor, reads, elapsed } = await readHotKey(ttlSeconds)
      const gets = monitor.count('get', key)
      const lifetimes = elapsed / (ttlSeconds * 1000 * DEFAULT_TTL_FRACTION)
      const { l1Hits } = agent.stats()
      console.log(
        `${ttlSeconds} s TTL: ${reads} reads, ${gets} GETs at Redis over ${lifetimes.toFixed(1)} L1 lifetimes ` +
          `(${(gets / lifetimes).toFixed(2)} per lifetime), L1 hits ${((100 * l1Hits) / (reads + 1)).toFixed(2)}%`,
      )
      expect(gets).toBeLessThanOrEqual(READS_PER_LIFETIME * lifetimes)
    })
  }

  it('reloads in place of the L1 refresh before the last lifetime: four fills per logical TTL, not five', async () => {
    // With lifetimes of a fifth of the TTL, fills at 0, 1, 2 and 3 lifetimes (less the refresh leads); the one at
    // about 4 would be dropped by the reload's write a few ms later, so the reload is started ahead of it instead.
    // Nine seconds: three or four reloads, two or three whole logical TTLs between them.
    const { key, monitor } = await readHotKey(3, 9000)
    // L1's fills are GET and PTTL of the key on the tracked connection; the reload's write is the script's SET.
    const fillsPerReload: number[] = []
    let fills: number | undefined
    for (const [command, name] of monitor.seen) {
      if (name !== key) continue
      const upper = command?.toUpperCase()
      if (upper === 'PTTL' && fills !== undefined) fills++
      if (upper === 'SET') {
        if (fills !== undefined) fillsPerReload.push(fills)
        fills = 0
      }
    }
    console.log(`L1 fills between reloads: ${fillsPerReload.join(', ')}`)
    expect(fillsPerReload.length).toBeGreaterThanOrEqual(2)
    const sorted = [...fillsPerReload].sort((a, b) => a - b)
    expect(sorted[Math.floor(sorted.length / 2)]).toBe(4)
  })
})
