import { describe, expect, it } from 'vitest'
import { replicaReadThroughClusterFailover } from '../../../packages/agent/test/support/replica-read-cluster-failover.js'
import {
  crashPrimary,
  expectSentinelFailoverFigures,
  MAX_LAG_MS,
  type OpenReader,
  type ReplicaReader,
  replicaReadThroughFailover,
  sentinelFailover,
} from '../../../packages/agent/test/support/replica-read-failover.js'
import { startProxy } from './support/proxy-fixture.js'

/** A client of a proxy on `backend` (a plain ioredis client), as the reader under test. */
async function proxyReader(backend: string, namespace: string, cluster = false): Promise<ReplicaReader> {
  const running = await startProxy(backend, { cluster, heatsink: { namespace, maxReplicaLagMs: MAX_LAG_MS } })
  const client = running.client()
  return {
    get: (key) => client.get(key),
    mitigation: (key) => running.proxy.agent.mitigation(key),
    close: () => running.proxy.close(1000),
  }
}

// A proxy on REDIS_URL=redis+sentinel://<the three sentinels>/<master>.
const throughProxy: OpenReader = (sentinels, namespace) => {
  const hosts = sentinels.sentinels.map((sentinel) => `${sentinel.host}:${sentinel.port}`).join(',')
  return proxyReader(`redis+sentinel://${hosts}/${sentinels.masterName}`, namespace)
}

describe('replica_read through a Sentinel failover (a primary, two replicas), through the proxy', () => {
  it('SENTINEL FAILOVER: no error, no read older than maxReplicaLagMs, the set learnt again, the old primary reads again', async () => {
    const figures = await replicaReadThroughFailover(throughProxy, sentinelFailover)
    console.log(`proxy replica_read through SENTINEL FAILOVER: ${JSON.stringify(figures)}`)
    expectSentinelFailoverFigures(figures)
  }, 60_000)

  it('kill -9 of the primary: no error (reads wait for the new primary), no read older than maxReplicaLagMs, the promoted replica leaves the set', async () => {
    const figures = await replicaReadThroughFailover(throughProxy, crashPrimary)
    console.log(`proxy replica_read through kill -9 of the primary: ${JSON.stringify(figures)}`)
    expect(figures.errors).toBe(0)
    expect(figures.maxAgeMs).toBeLessThanOrEqual(MAX_LAG_MS)
    expect(figures.replicasAfter).toBe(1)
    expect((figures.sharesAfter[0] as number) / 200).toBeLessThanOrEqual(0.4)
  }, 120_000)
})

describe('replica_read through a Cluster failover (a master, two replicas), through the proxy', () => {
  it('CLUSTER FAILOVER: no error, no read older than maxReplicaLagMs, the old master reads again as a replica', async () => {
    const figures = await replicaReadThroughClusterFailover((servers, namespace) => {
      const seed = servers.nodes[0]
      if (seed === undefined) throw new Error('the cluster has no node')
      return proxyReader(`redis://${seed.host}:${seed.port}`, namespace, true)
    })
    console.log(`proxy replica_read through CLUSTER FAILOVER: ${JSON.stringify(figures)}`)
    expect(figures.errors).toBe(0)
    expect(figures.maxAgeMs).toBeLessThanOrEqual(MAX_LAG_MS)
    expect(figures.oldMasterIsReplica).toBe(true)
  }, 90_000)
})
