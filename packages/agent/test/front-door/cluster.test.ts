import { createNames, redisClusterSlot } from '@heatsink/protocol'
import { testNamespace } from '@heatsink/test'
import { Cluster as PlainCluster } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { Cluster } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { useClusterClients } from '../support/cluster-clients.js'
import { useRedisCluster, waitFor } from '../support/helpers.js'

const servers = useRedisCluster()
const ready = useClusterClients()

/** One key per master, so that every test crosses all three. */
function keysOnEveryMaster(client: PlainCluster, namespace: string): string[] {
  const byOwner = new Map<string, string>()
  for (let n = 0; byOwner.size < 3; n++) {
    const key = `${namespace}:k${n}`
    const owner = client.slots[redisClusterSlot(key)]?.[0]
    if (owner !== undefined && !byOwner.has(owner)) byOwner.set(owner, key)
  }
  return [...byOwner.values()]
}

describe('the ioredis Cluster front door', () => {
  it('serves keys on every master from L1 when the client is given one seed node, as most applications do', async () => {
    for (let round = 0; round < 3; round++) {
      const namespace = testNamespace()
      // Not awaited: the agent starts while the client has only its seed's view of the cluster.
      const cluster = new Cluster([servers().nodes[0] as { host: string; port: number }], {
        heatsink: { namespace, l1: { maxTtlMs: 60_000 } },
      })
      void ready(cluster)
      const plain = await ready(new PlainCluster(servers().nodes))
      const keys = keysOnEveryMaster(plain, namespace)
      for (const key of keys) await plain.set(key, key)
      await publishRegistry(plain, createNames(namespace), ...keys.map((key) => ({ key })))
      await cluster.heatsink.ready()
      await waitFor(
        () => keys.every((key) => cluster.heatsink.mitigation(key) === 'local_cache'),
        'the promotion',
      )
      for (const key of keys) {
        await waitFor(async () => {
          const hits = cluster.heatsink.stats().l1Hits
          expect(await cluster.get(key)).toBe(key)
          return cluster.heatsink.stats().l1Hits > hits
        }, `an L1 hit on ${key} (round ${round})`)
      }
      await cluster.quit()
      plain.disconnect()
    }
  })

  it('serves local_cache keys on every master from L1, reads its own writes, and sees a plain writer', async () => {
    const namespace = testNamespace()
    const cluster = await ready(
      new Cluster(servers().nodes, { heatsink: { namespace, l1: { maxTtlMs: 60_000 } } }),
    )
    const plain = await ready(new PlainCluster(servers().nodes))
    await cluster.heatsink.ready()
    const keys = keysOnEveryMaster(plain, namespace)
    for (const key of keys) await plain.hset(key, { owner: key, n: '0' })
    await publishRegistry(plain, createNames(namespace), ...keys.map((key) => ({ key })))
    await waitFor(
      () => keys.every((key) => cluster.heatsink.mitigation(key) === 'local_cache'),
      'the promotion',
    )

    for (const key of keys) {
      expect(await cluster.hgetall(key)).toEqual({ owner: key, n: '0' })
      await waitFor(async () => {
        const hits = cluster.heatsink.stats().l1Hits
        await cluster.hgetall(key)
        return cluster.heatsink.stats().l1Hits > hits
      }, `an L1 hit on ${key}`)
      for (let i = 1; i <= 100; i++) {
        await cluster.hset(key, 'n', String(i))
        expect(await cluster.hget(key, 'n')).toBe(String(i))
        expect((await cluster.hgetall(key)).n).toBe(String(i))
      }
      // A pipeline on the key's slot: the write evicts before the read behind it is answered.
      const results = await cluster.pipeline().hset(key, 'n', 'p').hgetall(key).exec()
      expect(results?.[1]?.[1]).toEqual({ owner: key, n: 'p' })

      await plain.hset(key, 'n', 'from a plain client')
      await waitFor(
        async () => (await cluster.hget(key, 'n')) === 'from a plain client',
        'the plain write',
        1000,
      )
    }
    expect(cluster.heatsink.stats().l1Hits).toBeGreaterThan(0)
  })

  it('answers a pipeline of which L1 serves every command (no command of it reaches a master)', async () => {
    const namespace = testNamespace()
    const cluster = await ready(
      new Cluster(servers().nodes, { heatsink: { namespace, l1: { maxTtlMs: 60_000 } } }),
    )
    const plain = await ready(new PlainCluster(servers().nodes))
    await cluster.heatsink.ready()
    const key = `${namespace}:hot`
    await plain.set(key, 'value')
    await publishRegistry(plain, createNames(namespace), { key })
    await waitFor(() => cluster.heatsink.mitigation(key) === 'local_cache', 'the promotion')
    await waitFor(async () => {
      const hits = cluster.heatsink.stats().l1Hits
      await cluster.get(key)
      return cluster.heatsink.stats().l1Hits > hits
    }, 'the key in L1')
    const hits = cluster.heatsink.stats().l1Hits
    expect(await cluster.pipeline().get(key).get(key).exec()).toEqual([
      [null, 'value'],
      [null, 'value'],
    ])
    expect(cluster.heatsink.stats().l1Hits).toBe(hits + 2)
    // The pipeline's connection is still usable: a pipeline of one served and one sent command.
    expect(await cluster.pipeline().get(key).set(key, 'next').get(key).exec()).toEqual([
      [null, 'value'],
      [null, 'OK'],
      [null, 'next'],
    ])
  })
})
