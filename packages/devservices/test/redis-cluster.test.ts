import { Cluster, Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { findExecutable } from '../src/find-executable.js'
import { ServiceUnavailableError, startRedisCluster } from '../src/index.js'
import { isListening } from '../src/tcp-probe.js'

const hasRedis = findExecutable('redis-server') !== undefined && findExecutable('redis-cli') !== undefined

describe('startRedisCluster', () => {
  it.skipIf(!hasRedis)('starts three masters that split keys by slot, and stop() ends them', async () => {
    const cluster = await startRedisCluster({ masters: 3 })
    const client = new Cluster(cluster.nodes)
    try {
      expect(cluster.nodes).toHaveLength(3)
      const keys = Array.from({ length: 30 }, (_, index) => `hs-cluster-${index}`)
      for (const key of keys) await client.set(key, `value of ${key}`)

      for (const key of keys) expect(await client.get(key)).toBe(`value of ${key}`)
      // 30 keys over 16384 slots split three ways: every master holds some.
      const sizes = await Promise.all(client.nodes('master').map((node) => node.dbsize()))
      expect(sizes).toHaveLength(3)
      for (const size of sizes) expect(size).toBeGreaterThan(0)
      expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(keys.length)
    } finally {
      await client.quit()
      await cluster.stop()
    }

    for (const node of cluster.nodes) expect(await isListening(node.host, node.port)).toBe(false)
  })

  it.skipIf(!hasRedis)(
    'with replicas: each master has one synced replica, promoted when its master crashes',
    async () => {
      const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 })
      const client = new Cluster(cluster.nodes)
      try {
        expect(cluster.nodes).toHaveLength(6)
        const ownerPort = await slotOwnerPort(client, 'hs-cluster-failover')
        // WAIT through a Cluster client goes to any node: ask the key's own master, which the replica follows.
        const owner = new Redis(ownerPort, '127.0.0.1')
        await owner.set('hs-cluster-failover', 'kept')
        expect(await owner.wait(1, 5000)).toBe(1)
        owner.disconnect()
        await cluster.servers.find((server) => server.port === ownerPort)?.crash()

        // The replica takes over after cluster-node-timeout (2 s) and holds the value its master had synced.
        const deadline = Date.now() + 15_000
        let value: string | null | undefined
        while (value === undefined && Date.now() < deadline) {
          value = await client.get('hs-cluster-failover').catch(() => undefined)
        }
        expect(value).toBe('kept')
        // The node asked for CLUSTER SLOTS may learn of the failover by gossip a moment after the replica serves.
        let newOwnerPort = ownerPort
        while (newOwnerPort === ownerPort && Date.now() < deadline) {
          newOwnerPort = await slotOwnerPort(client, 'hs-cluster-failover').catch(() => ownerPort)
          if (newOwnerPort === ownerPort) await new Promise((resolve) => setTimeout(resolve, 100))
        }
        expect(newOwnerPort).not.toBe(ownerPort)
      } finally {
        client.disconnect()
        await cluster.stop()
      }
    },
    30_000,
  )

  it('says how to get Redis when redis-server or redis-cli is missing', async () => {
    const error = await startRedisCluster({ binDirs: [] }).catch((caught: unknown) => caught)

    expect(error).toBeInstanceOf(ServiceUnavailableError)
    expect(error).toMatchObject({ code: 'E_SERVICE_UNAVAILABLE', service: 'redis-cluster' })
    expect((error as Error).message).toContain('apt-get install -y --no-install-recommends redis-server')
  })

  it('rejects a negative replica count', async () => {
    await expect(startRedisCluster({ replicasPerMaster: -1 })).rejects.toThrow(RangeError)
  })

  it('rejects fewer than three masters, which redis-cli cannot form into a cluster', async () => {
    await expect(startRedisCluster({ masters: 2 })).rejects.toThrow(RangeError)
  })
})

/** The port of the master serving `key`'s slot, per a fresh CLUSTER SLOTS from a live node. */
async function slotOwnerPort(client: Cluster, key: string): Promise<number> {
  const slot = Number(await client.cluster('KEYSLOT', key))
  const ranges = await client.cluster('SLOTS')
  const master = ranges.find(([start, end]) => slot >= start && slot <= end)?.[2]
  if (master === undefined) throw new Error(`no master serves slot ${slot}`)
  return master[1]
}
