import { Redis as HeatsinkRedis } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import { ensureRedis, freePort, type RunningService } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { createProxy, type RespProxy } from '@heatsink/proxy'
import { type ChannelListener, listenToEveryChannel, testNamespace, useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessAggregator, until } from './support/in-process.js'
import { expectL1Hit, readsWithin, waitUntil } from './support/l1-reads.js'

const postgres = useTestPostgres({ scope: 'all' })

const HOT_KEY = 'page:home'
const LOADED_KEY = 'product:42'

// Two private servers: D, the application's data Redis, and C, Heatsink's control Redis. Private, because the test
// reads the whole keyspace, the client list and every channel of each.
describe('a control Redis apart from the data Redis (HEATSINK_CONTROL_REDIS_URL)', () => {
  const namespace = testNamespace()
  const names = createNames(namespace)
  let data: RunningService
  let control: RunningService
  let aggregator: Aggregator
  let proxy: RespProxy
  let proxyPort: number
  let dropIn: HeatsinkRedis
  const clients: Redis[] = []
  let onDataChannels: ChannelListener
  let onControlChannels: ChannelListener

  const client = (url: string) => {
    const opened = new Redis(url, { maxRetriesPerRequest: 1 })
    opened.on('error', () => {})
    clients.push(opened)
    return opened
  }

  beforeAll(async () => {
    data = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
    control = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
    // A client of the application that listens to every channel of each server from the start.
    onDataChannels = await listenToEveryChannel(data.url)
    onControlChannels = await listenToEveryChannel(control.url)
    // One environment for every component: REDIS_URL names the data Redis, the control Redis is named apart.
    aggregator = inProcessAggregator(
      { redisUrl: data.url, databaseUrl: postgres().url, namespace },
      { HEATSINK_CONTROL_REDIS_URL: control.url, HEATSINK_HOT_RPS: '200' },
    )
    await aggregator.start()
    ;({ proxy, port: proxyPort } = await createProxy({
      backend: data.url,
      control: control.url,
      port: 0,
      heatsink: { namespace, agentId: 'e2e-proxy' },
    }))
    await proxy.agent.ready()
    dropIn = new HeatsinkRedis(data.url, {
      heatsink: { namespace, agentId: 'e2e-drop-in', control: control.url },
    })
    await dropIn.heatsink.ready()
  }, 60_000)

  afterAll(async () => {
    await dropIn?.quit()
    await proxy?.close(1000)
    await aggregator?.stop()
    for (const opened of clients) opened.disconnect()
    onDataChannels?.close()
    onControlChannels?.close()
    await data?.stop()
    await control?.stop()
  })

  const proxied = () => client(`redis://127.0.0.1:${proxyPort}`)

  it('detects a key read hot through the proxy, with the aggregator on C only, and serves it from L1', async () => {
    await client(data.url).set(HOT_KEY, 'v1')
    const through = proxied()
    const started = Date.now()
    while (proxy.agent.mitigation(HOT_KEY) !== 'local_cache') {
      if (Date.now() - started > 15_000) throw new Error(`${HOT_KEY} not promoted within 15 s`)
      await Promise.all(Array.from({ length: 50 }, () => through.get(HOT_KEY)))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await until('the promotion on the drop-in', () => dropIn.heatsink.mitigation(HOT_KEY) === 'local_cache')

    await expectL1Hit(
      () => through.get(HOT_KEY),
      () => proxy.agent.stats().l1Hits,
      'v1',
    )
    await expectL1Hit(
      () => dropIn.get(HOT_KEY),
      () => dropIn.heatsink.stats().l1Hits,
      'v1',
    )
  }, 30_000)

  it("ends the proxy's and the drop-in's L1 copies on a write through either, or by a plain client of D", async () => {
    const through = proxied()
    const plain = client(data.url)
    const proxyRead = () => through.get(HOT_KEY)
    const proxyHits = () => proxy.agent.stats().l1Hits
    const dropInRead = () => dropIn.get(HOT_KEY)
    const dropInHits = () => dropIn.heatsink.stats().l1Hits

    await expectL1Hit(proxyRead, proxyHits, 'v1')
    await dropIn.set(HOT_KEY, 'v2')
    await readsWithin(proxyRead, 'v2')
    await expectL1Hit(proxyRead, proxyHits, 'v2')

    await expectL1Hit(dropInRead, dropInHits, 'v2')
    await through.set(HOT_KEY, 'v3')
    await readsWithin(dropInRead, 'v3')
    await expectL1Hit(dropInRead, dropInHits, 'v3')

    await expectL1Hit(proxyRead, proxyHits, 'v3')
    await plain.set(HOT_KEY, 'v4')
    await readsWithin(proxyRead, 'v4')
    await readsWithin(dropInRead, 'v4')
  })

  it("keeps getOrLoad's lease on D only while the load runs, and announces its end on C", async () => {
    let finish: (value: string) => void = () => {}
    const loading = dropIn.heatsink.getOrLoad(LOADED_KEY, () => new Promise<string>((r) => (finish = r)), {
      ttlSeconds: 60,
    })
    const lease = names.leaseKey(LOADED_KEY)
    const onData = client(data.url)
    await waitUntil(async () => (await onData.exists(lease)) === 1, 'the lease on D')
    finish('loaded')
    expect(await loading).toBe('loaded')
    expect(await onData.exists(lease)).toBe(0)
    await until('the end of the lease announced on C', () =>
      onControlChannels.channels.includes(`${namespace}:filled`),
    )
  })

  it('leaves in D only the application keys and the database marker, no blocked client, no Heatsink channel', async () => {
    const onData = client(data.url)
    const onControl = client(control.url)
    expect((await onData.keys('*')).sort()).toEqual([HOT_KEY, names.databaseMarkerKey, LOADED_KEY].sort())
    expect(await onData.dbsize()).toBe(3)
    expect(infoField(await onData.info('clients'), 'blocked_clients')).toBe(0)
    // Not even `__redis__:invalidate`: Redis sends it to the tracking subscribers alone.
    expect(onDataChannels.channels).toEqual([])

    // Where it all went instead: the aggregator blocks on C's report streams, and C carries every channel.
    await waitUntil(
      async () => infoField(await onControl.info('clients'), 'blocked_clients') > 0,
      "the aggregator's blocking read on C",
    )
    for (const agentId of ['e2e-proxy', 'e2e-drop-in']) {
      expect(await onControl.type(names.reportStreamFor(agentId))).toBe('stream')
    }
    expect(await onControl.hexists(names.registrySnapshotKey, 'snapshot')).toBe(1)
    expect(await onControl.exists(names.agentsKey)).toBe(1)
    expect(new Set(onControlChannels.channels)).toEqual(
      new Set([names.registryChannel, names.invalidationChannel, `${namespace}:filled`]),
    )
  })
})

function infoField(info: string, field: string): number {
  return Number(new RegExp(`^${field}:(\\d+)`, 'm').exec(info)?.[1])
}
