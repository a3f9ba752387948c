import { Redis as PlainRedis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { useClusterClients } from '../support/cluster-clients.js'
import { clusterWithHotKey } from '../support/cluster-hot-key.js'
import { useRedisCluster, waitFor } from '../support/helpers.js'
import { killTrackingDuringFill, settledWithin, trackingClientId } from '../support/tracking-loss.js'

const servers = useRedisCluster()
const ready = useClusterClients()
const admins: PlainRedis[] = []
afterEach(() => {
  for (const admin of admins.splice(0)) admin.disconnect()
})

// From the kill answered: every read that waited on the lost fill answered from Redis (see tracking-loss.test.ts).
const AFTER_KILL_MS = 1000

describe('a fill on a Cluster whose master’s tracking connection is lost', () => {
  it('is abandoned at once: every GET waiting on it is answered from that master', async () => {
    const { cluster, plain, key, owner: address } = await clusterWithHotKey(servers().nodes, ready)
    const owner = new PlainRedis(address)
    admins.push(owner)

    const { reads, killedAt } = await killTrackingDuringFill(owner, await trackingClientId(owner), () =>
      Array.from({ length: 50 }, () => cluster.get(key)),
    )
    const { outcomes } = await settledWithin(reads, killedAt, AFTER_KILL_MS)
    expect(outcomes).toEqual(Array(50).fill({ status: 'fulfilled', value: 'value' }))
    expect(cluster.heatsink.stats().l1FillsAbandoned).toBe(1)

    await waitFor(
      async () => {
        const hits = cluster.heatsink.stats().l1Hits
        expect(await cluster.get(key)).toBe('value')
        return cluster.heatsink.stats().l1Hits > hits
      },
      'an L1 hit after the reconnect',
      3000,
    )
    await plain.set(key, 'next')
    await waitFor(async () => (await cluster.get(key)) === 'next', 'the write after the reconnect', 1000)
  })
})
