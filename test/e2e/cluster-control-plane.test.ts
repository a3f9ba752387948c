import { Cluster as HeatsinkCluster } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { createProxy, type RespProxy } from '@heatsink/proxy'
import { testNamespace, useTestPostgres } from '@heatsink/test'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessAggregator, until } from './support/in-process.js'
import { expectL1Hit, readsWithin, waitUntil } from './support/l1-reads.js'

const postgres = useTestPostgres({ scope: 'all' })

const HOT_KEY = 'page:home'
const PROMOTED_KEY = 'product:{7}:price'
const COUNTER_SHARDS = 16

// A private 3-master Cluster and nothing else: the aggregator, a proxy and a drop-in all keep Heatsink's state on
// it (HEATSINK_REDIS_CLUSTER=true, no control Redis). Private, because the test reads every master's keyspace.
describe('the control plane on a Redis Cluster (HEATSINK_REDIS_CLUSTER=true)', () => {
  const namespace = testNamespace()
  const names = createNames(namespace)
  let servers: RedisCluster
  let seedUrl: string
  let aggregator: Aggregator
  let base: string
  let proxy: RespProxy
  let proxyPort: number
  let dropIn: HeatsinkCluster
  const clients: Array<Redis | Cluster> = []

  const track = <T extends Redis | Cluster>(client: T): T => {
    client.on('error', () => {})
    clients.push(client)
    return client
  }

  beforeAll(async () => {
    servers = await startRedisCluster({ masters: 3 })
    const [seed] = servers.nodes
    seedUrl = `redis://${seed?.host}:${seed?.port}`
    aggregator = inProcessAggregator(
      { redisUrl: seedUrl, databaseUrl: postgres().url, namespace },
      {
        HEATSINK_REDIS_CLUSTER: 'true',
        HEATSINK_HOT_RPS: '200',
        HEATSINK_COUNTER_SHARDS: String(COUNTER_SHARDS),
      },
    )
    await aggregator.start()
    base = aggregator.url() as string
    ;({ proxy, port: proxyPort } = await createProxy({
      backend: seedUrl,
      cluster: true,
      port: 0,
      heatsink: { namespace, agentId: 'cluster-proxy' },
    }))
    await proxy.agent.ready()
    dropIn = new HeatsinkCluster(servers.nodes, { heatsink: { namespace, agentId: 'cluster-drop-in' } })
    dropIn.on('error', () => {})
    await dropIn.heatsink.ready()
  }, 60_000)

  afterAll(async () => {
    await dropIn?.quit()
    await proxy?.close(1000)
    await aggregator?.stop()
    for (const client of clients) client.disconnect()
    await servers?.stop()
  })

  const proxied = () => track(new Redis(proxyPort, '127.0.0.1', { maxRetriesPerRequest: 1 }))
  const everyAgent = () => [proxy.agent.mitigation.bind(proxy.agent), dropIn.heatsink.mitigation]

  it('detects a key read hot through the proxy and promotes it on every agent, counting on every master', async () => {
    await dropIn.set(HOT_KEY, 'v1')
    const through = proxied()
    const started = Date.now()
    while (proxy.agent.mitigation(HOT_KEY) !== 'local_cache') {
      if (Date.now() - started > 15_000) throw new Error(`${HOT_KEY} not promoted within 15 s`)
      // Beside the hot key, lukewarm ones, so the reports name keys of every counter shard.
      await Promise.all([
        ...Array.from({ length: 50 }, () => through.get(HOT_KEY)),
        ...Array.from({ length: COUNTER_SHARDS * 4 }, (_, i) => through.get(`lukewarm:${i}`)),
      ])
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await until('the promotion on the drop-in', () => dropIn.heatsink.mitigation(HOT_KEY) === 'local_cache')
    const { hotkeys } = (await (await fetch(`${base}/hotkeys`)).json()) as { hotkeys: unknown[] }
    expect(hotkeys).toEqual([
      expect.objectContaining({ key: HOT_KEY, mitigation: 'local_cache', source: 'auto' }),
    ])

    // What HEATSINK_COUNTER_SHARDS is for: each window's counts spread over the masters, not one hash on one node.
    const masters = servers.nodes.map(({ host, port }) => track(new Redis(port, host)))
    // Window hashes expire with their windows, and one window's reads may touch few shards: look over a few windows.
    const seen = masters.map(() => false)
    for (const deadline = Date.now() + 5000; !seen.every(Boolean) && Date.now() < deadline; ) {
      const counterHashes = await Promise.all(masters.map((master) => master.keys(`${namespace}:w:*`)))
      counterHashes.forEach((found, index) => {
        if (found.length > 0) seen[index] = true
      })
      await Promise.all(Array.from({ length: COUNTER_SHARDS * 4 }, (_, i) => through.get(`lukewarm:${i}`)))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(seen).toEqual([true, true, true])
  }, 30_000)

  it('sends a promotion and a demotion made through the REST API to every agent', async () => {
    const promoted = await fetch(`${base}/hotkeys/${encodeURIComponent(PROMOTED_KEY)}/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mitigation: 'local_cache' }),
    })
    expect(promoted.status).toBe(201)
    for (const mitigation of everyAgent()) {
      await until('the promotion on an agent', () => mitigation(PROMOTED_KEY) === 'local_cache')
    }

    const demoted = await fetch(`${base}/hotkeys/${encodeURIComponent(PROMOTED_KEY)}`, { method: 'DELETE' })
    expect(demoted.status).toBe(204)
    for (const mitigation of everyAgent()) {
      await until('the demotion on an agent', () => mitigation(PROMOTED_KEY) === undefined)
    }
  })

  it("ends both agents' L1 copies on a write through either, or by a plain Cluster client", async () => {
    const through = proxied()
    const plain = track(new Cluster(servers.nodes))
    const proxyRead = () => through.get(HOT_KEY)
    const dropInRead = () => dropIn.get(HOT_KEY)

    await expectL1Hit(proxyRead, () => proxy.agent.stats().l1Hits, 'v1')
    await expectL1Hit(dropInRead, () => dropIn.heatsink.stats().l1Hits, 'v1')
    await dropIn.set(HOT_KEY, 'v2')
    await readsWithin(proxyRead, 'v2')
    await through.set(HOT_KEY, 'v3')
    await readsWithin(dropInRead, 'v3')
    await plain.set(HOT_KEY, 'v4')
    await readsWithin(proxyRead, 'v4')
    await readsWithin(dropInRead, 'v4')
  })

  it("reads every agent's report stream through the consumer group, on the stream's own master", async () => {
    const cluster = track(new Cluster(servers.nodes))
    for (const agentId of ['cluster-proxy', 'cluster-drop-in']) {
      const stream = names.reportStreamFor(agentId)
      await waitUntil(async () => {
        const [group] = (await cluster.xinfo('GROUPS', stream)) as unknown[][]
        const fields = new Map(chunk(group ?? []))
        return (
          fields.get('name') === names.consumerGroup &&
          Number(fields.get('entries-read')) > 0 &&
          fields.get('lag') === 0
        )
      }, `${stream} read to its end`)
    }
  })
})

function chunk(flat: readonly unknown[]): Array<[unknown, unknown]> {
  const pairs: Array<[unknown, unknown]> = []
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]])
  return pairs
}
