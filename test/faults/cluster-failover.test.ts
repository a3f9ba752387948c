import { Redis as PlainRedis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { clientsOn, promoted, slotOwners, useClusterPerTest } from './support/cluster-failover.js'
import { failoverUnderTraffic, STALE_BOUND_MS } from './support/failover-scenario.js'

const newCluster = useClusterPerTest()

describe("the drop-in through a Cluster master's failover, beside a plain ioredis reader", () => {
  it('CLUSTER FAILOVER on the replica: no read staler than without a failover, L1 back within 1 s', async () => {
    const servers = await newCluster()
    const figures = await failoverUnderTraffic(clientsOn(servers), async () => {
      const { replica } = await slotOwners(servers)
      const admin = new PlainRedis({ host: '127.0.0.1', port: replica })
      await admin.cluster('FAILOVER')
      admin.disconnect()
      return promoted(replica)
    })
    console.log('CLUSTER FAILOVER', JSON.stringify(figures))
    expect(figures.maxStaleMsAfterSwitch).toBeLessThan(STALE_BOUND_MS)
    expect(figures.l1BackMs).toBeLessThan(1000)
  }, 30_000)
})
