import { createNames } from '@heatsink/protocol'
import { testNamespace, usePrivateRedis } from '@heatsink/test'
import { Redis as PlainRedis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { demoteRegistry, publishRegistry } from '../../src/testing.js'
import { startMonitor, waitFor } from '../support/helpers.js'
import { readersFor, USE_BEFORE_DEMOTION } from '../support/registry-churn.js'

// Counts commands with MONITOR: a private server, so no other file's traffic is counted or slowed.
const redis = usePrivateRedis()
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

describe('a registry change for one key, through the drop-in', () => {
  for (const mitigation of ['split', 'local_cache', 'coalesce'] as const) {
    it(`(demoting a ${mitigation} key) sends none of another local_cache key's reads to Redis`, async () => {
      const namespace = testNamespace()
      const names = createNames(namespace)
      const admin = new PlainRedis(redis().url)
      open.push({ close: () => admin.disconnect() })
      // L1 entries outlive the test: only a change to the steady key could explain one of its reads at Redis.
      const client = new Redis(redis().url, { heatsink: { namespace, l1: { maxTtlMs: 60_000 } } })
      open.push({ close: () => client.quit() })
      await client.heatsink.ready()
      const [steady, other] = [`${namespace}:steady`, `${namespace}:other`]
      await admin.set(steady, 'steady')
      await admin.set(other, '5')
      await publishRegistry(admin, names, { key: steady })
      await waitFor(() => client.heatsink.mitigation(steady) === 'local_cache', 'the steady promotion')
      expect(await client.get(steady)).toBe('steady')
      const monitor = await startMonitor(redis().url)
      open.push({ close: () => monitor.stop() })

      const promote = async () => {
        await publishRegistry(admin, names, { key: other, mitigation, splitFactor: 4 })
        await waitFor(() => client.heatsink.mitigation(other) === mitigation, `the ${mitigation} promotion`)
        await USE_BEFORE_DEMOTION[mitigation](client, other)
      }
      const steadyGets = async () => {
        await monitor.sync()
        return monitor.count('get', steady)
      }
      for (let round = 0; round < 3; round++) {
        // The steady key's entry is in L1: the demotion leaves it there, and every read is a hit.
        await promote()
        let before = await steadyGets()
        const hitsBefore = client.heatsink.stats().l1Hits
        await demoteRegistry(admin, names, other)
        const reads = await readersFor(async () => {
          expect(await client.get(steady)).toBe(round === 0 ? 'steady' : `steady-${round - 1}`)
        })
        expect(client.heatsink.mitigation(other)).toBeUndefined()
        expect(await steadyGets()).toBe(before)
        expect(client.heatsink.stats().l1Hits - hitsBefore).toBe(reads)

        // The steady key changed (a plain client's write) just before the demotion: its refill, started by the
        // first reader, is shared by every other and stored, the demotion landing meanwhile or not.
        await promote()
        const invalidated = client.heatsink.stats().l1Invalidations.tracking
        await admin.set(steady, `steady-${round}`)
        await waitFor(
          () => client.heatsink.stats().l1Invalidations.tracking > invalidated,
          'the invalidation of the steady key',
        )
        before = await steadyGets()
        const demoted = demoteRegistry(admin, names, other)
        await readersFor(async () => {
          expect(await client.get(steady)).toBe(`steady-${round}`)
        })
        await demoted
        expect(await steadyGets()).toBe(before + 1)
      }
    })
  }
})
