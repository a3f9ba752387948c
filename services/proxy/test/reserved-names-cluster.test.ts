import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scanAll, waitFor } from './support/proxy-fixture.js'
import { startProxyProcess } from './support/proxy-process.js'

// KEYS and SCAN on a Cluster go to every master and are merged: Heatsink's report streams, spread over the masters,
// are left out of the merged reply a client of the proxy process sees.
let servers: RedisCluster | undefined

beforeAll(async () => {
  servers = await startRedisCluster({ masters: 3 })
}, 60_000)

afterAll(async () => {
  await servers?.stop()
})

describe("Heatsink's own keys behind a proxy in front of a Redis Cluster", () => {
  it('are left out of KEYS and SCAN fanned out to every master, and refused to a GET', async () => {
    const first = servers?.nodes[0]
    if (first === undefined) throw new Error('no cluster')
    const proxy = await startProxyProcess(`redis://${first.host}:${first.port}`, {
      HEATSINK_PROXY_CLUSTER: 'true',
      HEATSINK_WINDOW_MS: '200',
    })
    const direct = new Cluster(servers?.nodes ?? [])
    const client = new Redis({ port: proxy.port, maxRetriesPerRequest: 0 })
    try {
      const streams = `${proxy.namespace}:reports:`
      // The proxy's own report stream, and per-key statistics (as the aggregator writes them) on every master.
      await waitFor(
        async () => (await direct.keys(`${streams}*`)).length > 0,
        "the proxy's report stream",
        15_000,
      )
      const masters = direct.nodes('master')
      for (let n = 0; ; n++) {
        const perMaster = await Promise.all(masters.map((node) => node.dbsize()))
        if (perMaster.every((size) => size > 0)) break
        await direct.set(`${proxy.namespace}:stats:${n}`, 'x')
      }
      const mine = Array.from({ length: 30 }, (_, i) => `app:${i}`)
      for (const key of mine) await client.set(key, 'v')

      expect((await client.keys('*')).sort()).toEqual([...mine].sort())
      const scanned = await scanAll(client, 5)
      expect(scanned.sort()).toEqual([...mine].sort())
      await expect(client.xlen(`${streams}0`)).rejects.toThrow(`ERR '${streams}0' is reserved`)
    } finally {
      client.disconnect()
      direct.disconnect()
    }
  }, 60_000)
})
