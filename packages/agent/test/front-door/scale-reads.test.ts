import { createNames, redisClusterSlot } from '@heatsink/protocol'
import { testNamespace } from '@heatsink/test'
import { Cluster as PlainCluster, Redis as PlainRedis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { Cluster } from '../../src/index.js'
import { commandCalls, publishRegistry } from '../../src/testing.js'
import { useClusterClients } from '../support/cluster-clients.js'
import { useRedisCluster, waitFor } from '../support/helpers.js'

const servers = useRedisCluster({ replicasPerMaster: 1 })
const ready = useClusterClients()

// How many nodes (master and replicas) serve the key's slot, as `node` tells it.
async function slotNodes(node: { host: string; port: number }, key: string): Promise<number> {
  const admin = new PlainRedis(node)
  try {
    const slot = redisClusterSlot(key)
    const ranges = (await admin.cluster('SLOTS')) as unknown as [number, number, ...unknown[]][]
    return (ranges.find(([first, last]) => first <= slot && slot <= last)?.length ?? 2) - 2
  } finally {
    admin.disconnect()
  }
}

// `host:port` as the slot table names nodes, as an address.
function address(node: string): { host: string; port: number } {
  const colon = node.lastIndexOf(':')
  return { host: node.slice(0, colon), port: Number(node.slice(colon + 1)) }
}

// A local_cache key of a drop-in Cluster with `scaleReads`, once its slot's replica is in the slot table; with
// the key's master and replica.
async function promotedKey(scaleReads: 'slave' | 'master') {
  const namespace = testNamespace()
  const plain = await ready(new PlainCluster(servers().nodes))
  const key = `${namespace}:hot`
  // A cluster just made lists a replica once it has met its master, and not on every node at once: the agent's
  // client asks any one node for the slot table, so every node must list it.
  await waitFor(
    async () =>
      (await Promise.all(servers().nodes.map((node) => slotNodes(node, key)))).every((n) => n === 2),
    "the replica in every node's slot table",
    15_000,
  )
  await new Promise<void>((resolve) => plain.refreshSlotsCache(() => resolve()))
  const [master, replica] = (plain.slots[redisClusterSlot(key)] ?? []).map(address) as [
    { host: string; port: number },
    { host: string; port: number },
  ]
  const client = await ready(new Cluster(servers().nodes, { scaleReads, heatsink: { namespace } }))
  await plain.set(key, 'v1')
  await client.heatsink.ready()
  await publishRegistry(plain, createNames(namespace), { key })
  await waitFor(() => client.heatsink.mitigation(key) === 'local_cache', 'the promotion')
  // The replica has the value before the first read, so a fill there sees it.
  await waitFor(async () => (await client.get(key)) === 'v1', 'v1 on every node')
  return { plain, client, key, master, replica }
}

// The GETs the master and the replica answered while `read` ran.
async function getsDuring(nodes: { host: string; port: number }[], read: () => Promise<void>) {
  const before = await Promise.all(nodes.map((node) => commandCalls(node, 'get')))
  await read()
  const after = await Promise.all(nodes.map((node) => commandCalls(node, 'get')))
  return after.map((calls, i) => calls - (before[i] as number))
}

describe("L1 fills follow the client's scaleReads (Cluster with replicas)", () => {
  it("scaleReads 'slave': a hot key's fills read the replica, never the master, and its writes still invalidate", async () => {
    const { plain, client, key, master, replica } = await promotedKey('slave')
    const reads = 500
    const [onMaster, onReplica] = await getsDuring([master, replica], async () => {
      for (let round = 1; round <= 5; round++) {
        // Each write ends the entry on the agent once the replica has it; the next read fills again.
        await plain.set(key, `v${round + 1}`)
        await waitFor(async () => (await client.get(key)) === `v${round + 1}`, `v${round + 1} read`, 1000)
        for (let i = 0; i < reads / 5; i++) expect(await client.get(key)).toBe(`v${round + 1}`)
      }
    })
    const stats = client.heatsink.stats()
    console.log(
      `scaleReads slave: master ${onMaster} GETs, replica ${onReplica} GETs; L1 hits ${stats.l1Hits}`,
    )
    expect(onMaster).toBe(0)
    expect(onReplica).toBeGreaterThanOrEqual(5)
    expect(stats.l1Hits).toBeGreaterThanOrEqual(reads)
  })

  it("scaleReads 'master' (the default): fills read the master, as the client's own reads do", async () => {
    const { plain, client, key, master, replica } = await promotedKey('master')
    const [onMaster, onReplica] = await getsDuring([master, replica], async () => {
      await plain.set(key, 'v2')
      await waitFor(async () => (await client.get(key)) === 'v2', 'v2 read', 1000)
      for (let i = 0; i < 100; i++) expect(await client.get(key)).toBe('v2')
    })
    expect(onMaster).toBeGreaterThanOrEqual(1)
    // Its heartbeat-free replica answers nothing of this client's.
    expect(onReplica).toBe(0)
  })
})
