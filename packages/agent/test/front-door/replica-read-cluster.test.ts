import { createNames, redisClusterSlot } from '@heatsink/protocol'
import { testNamespace } from '@heatsink/test'
import { Cluster as PlainCluster } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { Cluster } from '../../src/index.js'
import { commandCalls, publishRegistry, StampedWriter } from '../../src/testing.js'
import { useClusterClients } from '../support/cluster-clients.js'
import { useRedisCluster, waitFor } from '../support/helpers.js'

const servers = useRedisCluster({ replicasPerMaster: 1 })
const ready = useClusterClients()
const MAX_LAG_MS = 500

// `host:port` as the slot table names nodes, as an address.
function address(node: string): { host: string; port: number } {
  const colon = node.lastIndexOf(':')
  return { host: node.slice(0, colon), port: Number(node.slice(colon + 1)) }
}

describe('replica_read through the ioredis Cluster front door', () => {
  it('reads a key from its master’s replica over READONLY: the master serves under 40%, none older than the bound, own writes seen', async () => {
    const namespace = testNamespace()
    const plain = await ready(new PlainCluster(servers().nodes))
    const key = `${namespace}:big`
    // A cluster just made lists its replicas once they have met their masters.
    await waitFor(
      async () => {
        await new Promise<void>((resolve) => plain.refreshSlotsCache(() => resolve()))
        return (plain.slots[redisClusterSlot(key)]?.length ?? 0) > 1
      },
      'the replica in the slot table',
      10_000,
    )
    const [master, replica] = (plain.slots[redisClusterSlot(key)] ?? []).map(address) as [
      { host: string; port: number },
      { host: string; port: number },
    ]
    const cluster = await ready(
      new Cluster(servers().nodes, { heatsink: { namespace, maxReplicaLagMs: MAX_LAG_MS } }),
    )
    await cluster.heatsink.ready()
    await publishRegistry(plain, createNames(namespace), { key, mitigation: 'replica_read' })
    await waitFor(() => cluster.heatsink.mitigation(key) === 'replica_read', 'the promotion')
    const writer = new StampedWriter(master, key)
    await writer.start(5)
    await waitFor(
      async () => {
        await cluster.get(key)
        return cluster.heatsink.stats().replicaReads.sent > 0
      },
      'a read from the replica',
      10_000,
    )
    const before = await Promise.all([commandCalls(master, 'get'), commandCalls(replica, 'get')])
    let maxAge = 0
    const reads = 2000
    for (let i = 0; i < reads; i++) {
      const issuedAt = Date.now()
      maxAge = Math.max(maxAge, writer.ageOf(await cluster.get(key), issuedAt))
    }
    const after = await Promise.all([commandCalls(master, 'get'), commandCalls(replica, 'get')])
    await writer.stop()
    const [onMaster, onReplica] = after.map((calls, i) => calls - (before[i] as number)) as [number, number]
    console.log(
      `replica_read on a Cluster: ${reads} reads; master ${onMaster}, replica ${onReplica} GETs (heartbeat polls included); max age ${maxAge} ms`,
    )
    expect(onMaster / reads).toBeLessThanOrEqual(0.4)
    expect(onReplica).toBeGreaterThan(reads * 0.6)
    expect(maxAge).toBeLessThanOrEqual(MAX_LAG_MS)
    for (let i = 0; i < 300; i++) {
      await cluster.set(key, `own-${i}`)
      expect(await cluster.get(key)).toBe(`own-${i}`)
    }
  }, 30_000)
})
