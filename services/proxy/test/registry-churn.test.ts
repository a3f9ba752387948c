import { demoteRegistry, publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { startMonitor } from '../../../packages/agent/test/support/helpers.js'
import { readersFor, USE_BEFORE_DEMOTION } from '../../../packages/agent/test/support/registry-churn.js'
import {
  promoteOnEvery,
  type RunningProxy,
  startProxy,
  usePrivateRedis,
  waitFor,
} from './support/proxy-fixture.js'

// The steady key's GETs are counted server-side (MONITOR; the split key's own machinery reads with GET too), on a
// private server, where only this file's commands run.
const redis = usePrivateRedis()
const open: Array<{ close(): unknown }> = []
afterEach(() => {
  for (const item of open.splice(0)) item.close()
})

describe('a registry change for one key, through two proxies', () => {
  for (const mitigation of ['split', 'local_cache', 'coalesce'] as const) {
    it(`(demoting a ${mitigation} key) sends none of another local_cache key's reads to Redis`, async () => {
      // L1 entries outlive the test: only a change to the steady key could explain one of its reads at Redis.
      const l1 = { maxTtlMs: 60_000 }
      const first = await startProxy(redis().url, { heatsink: { l1 } })
      const proxies: RunningProxy[] = [
        first,
        await startProxy(redis().url, { heatsink: { namespace: first.namespace, l1 } }),
      ]
      const names = createNames(first.namespace)
      const admin = new Redis(redis().url)
      open.push({ close: () => admin.disconnect() })
      const clients = proxies.map((proxy) => proxy.client())
      const [steady, other] = [`${first.namespace}:steady`, `${first.namespace}:other`]
      await admin.set(steady, 'steady')
      await admin.set(other, '5')
      await promoteOnEvery(admin, steady, proxies)
      for (const client of clients) expect(await client.get(steady)).toBe('steady')
      // Reader i's read i goes to one proxy, its next to the other, as a client behind a load balancer does, so both
      // proxies' L1s are exercised.
      const read = (i: number) => (clients[i % clients.length] as Redis).get(steady)
      const agents = proxies.map(({ proxy }) => proxy.agent)
      const promote = async () => {
        await publishRegistry(admin, names, { key: other, mitigation, splitFactor: 4 })
        await waitFor(() => agents.every((agent) => agent.mitigation(other) === mitigation), 'the promotion')
        for (const client of clients) await USE_BEFORE_DEMOTION[mitigation](client, other)
      }
      const demote = async () => {
        await demoteRegistry(admin, names, other)
        await waitFor(() => agents.every((agent) => agent.mitigation(other) === undefined), 'the demotion')
      }

      const monitor = await startMonitor(redis().url)
      open.push({ close: () => monitor.stop() })
      const steadyGets = async () => {
        await monitor.sync()
        return monitor.count('get', steady)
      }
      for (let round = 0; round < 3; round++) {
        // The steady key's entry is in both L1s: the demotion leaves them there, and no read reaches Redis.
        await promote()
        let before = await steadyGets()
        const value = round === 0 ? 'steady' : `steady-${round - 1}`
        await Promise.all([demote(), readersFor(async (i) => expect(await read(i)).toBe(value))])
        expect(await steadyGets()).toBe(before)

        // The steady key changed (a plain client's write) just before the demotion: each proxy refills it once,
        // its readers sharing the fill, and stores it, the demotion landing meanwhile or not.
        await promote()
        const invalidated = agents.map((agent) => agent.stats().l1Invalidations.tracking)
        await admin.set(steady, `steady-${round}`)
        await waitFor(
          () =>
            agents.every((agent, i) => agent.stats().l1Invalidations.tracking > (invalidated[i] as number)),
          'the invalidation on both proxies',
        )
        before = await steadyGets()
        await Promise.all([demote(), readersFor(async (i) => expect(await read(i)).toBe(`steady-${round}`))])
        expect(await steadyGets()).toBe(before + proxies.length)
      }
    })
  }
})
