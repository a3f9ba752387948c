import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { usePrivateRedis } from '@heatsink/test'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectionOwner } from '../src/storms/key-owner.js'

const standalone = usePrivateRedis()
let cluster: RedisCluster | undefined

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 })
}, 60_000)

afterAll(async () => {
  await cluster?.stop()
})

describe('the node a miss storm names as the owner of its key', () => {
  it('is the server itself on a standalone Redis', async () => {
    const redis = new Redis(standalone().url)
    try {
      await redis.ping()
      expect(connectionOwner(redis)('any:key')).toBe(`127.0.0.1:${new URL(standalone().url).port}`)
    } finally {
      await redis.quit()
    }
  })

  it("is the key's slot's master on a 3-master Cluster, as CLUSTER SLOTS says", async () => {
    const nodes = cluster?.nodes ?? []
    const client = new Cluster(nodes)
    const direct = new Redis(nodes[0]?.port ?? 0, nodes[0]?.host ?? '127.0.0.1')
    try {
      await client.ping()
      const ranges = (await direct.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>
      const owner = connectionOwner(client)
      const seen = new Set<string>()
      for (let i = 0; i < 60; i++) {
        const key = `user:${i}:profile`
        const slot = Number(await direct.call('CLUSTER', 'KEYSLOT', key))
        const range = ranges.find(([start, end]) => slot >= start && slot <= end)
        const [host, port] = range?.[2] ?? []
        expect(owner(key), key).toBe(`${host}:${port}`)
        seen.add(`${host}:${port}`)
      }
      // The keys spread over every master, so each of them was named somewhere.
      expect(seen.size).toBe(3)
    } finally {
      direct.disconnect()
      await client.quit()
    }
  })
})
