import { describe, expect, it } from 'vitest'
import { clientsOn, promoted, slotOwners, useClusterPerTest } from './support/cluster-failover.js'
import { failoverUnderTraffic, STALE_BOUND_MS } from './support/failover-scenario.js'

const newCluster = useClusterPerTest()

describe("the drop-in through a Cluster master's failover, beside a plain ioredis reader", () => {
  it('kill -9 of the master: no read staler than without a failover, L1 back within 1 s', async () => {
    const servers = await newCluster()
    const figures = await failoverUnderTraffic(clientsOn(servers), async () => {
      const { master, replica } = await slotOwners(servers)
      await servers.servers.find((server) => server.port === master)?.crash()
      return promoted(replica)
    })
    console.log('kill -9 of a Cluster master', JSON.stringify(figures))
    expect(figures.maxStaleMsAfterSwitch).toBeLessThan(STALE_BOUND_MS)
    expect(figures.l1BackMs).toBeLessThan(1000)
  }, 30_000)
})
