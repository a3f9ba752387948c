import { describe, expect, it } from 'vitest'
import { Cluster } from '../../src/index.js'
import { replicaReadThroughClusterFailover } from '../support/replica-read-cluster-failover.js'
import { dropInReader, MAX_LAG_MS } from '../support/replica-read-failover.js'

describe('replica_read through a Cluster failover (a master, two replicas), through the drop-in', () => {
  it('CLUSTER FAILOVER: no error, no read older than maxReplicaLagMs, the old master reads again as a replica', async () => {
    const figures = await replicaReadThroughClusterFailover(async (servers, namespace) => {
      const client = new Cluster(servers.nodes, { heatsink: { namespace, maxReplicaLagMs: MAX_LAG_MS } })
      client.on('error', () => {})
      await client.heatsink.ready()
      return dropInReader(client)
    })
    console.log(`replica_read through CLUSTER FAILOVER: ${JSON.stringify(figures)}`)
    expect(figures.errors).toBe(0)
    expect(figures.maxAgeMs).toBeLessThanOrEqual(MAX_LAG_MS)
    expect(figures.oldMasterIsReplica).toBe(true)
  }, 90_000)
})
