import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { createNames, redisClusterSlot } from '@heatsink/protocol'
import { testNamespace } from '@heatsink/test'
import { Cluster as PlainCluster, Redis as PlainRedis } from 'ioredis'
import { publishRegistry } from '../../src/testing.js'
import { type Node, spreadHolds, startFailoverReads } from './failover-reads.js'
import { waitFor } from './helpers.js'
import type { OpenReader as OpenSentinelReader } from './replica-read-failover.js'
import { SurvivingWriter } from './surviving-writer.js'

/** Opens the reader under test on `servers` with `namespace` and maxReplicaLagMs = MAX_LAG_MS, ready to read. */
export type OpenClusterReader = (servers: RedisCluster, namespace: string) => ReturnType<OpenSentinelReader>

/** The key's master and replicas as CLUSTER SLOTS on `at` gives them now. */
async function slotNodes(at: Node, key: string): Promise<Node[]> {
  const admin = new PlainRedis(at)
  try {
    const slot = redisClusterSlot(key)
    const ranges = (await admin.cluster('SLOTS')) as unknown as [number, number, ...[string, number][]][]
    const [, , ...nodes] = ranges.find(([first, last]) => first <= slot && slot <= last) ?? []
    return nodes.map(([host, port]) => ({ host, port }))
  } finally {
    admin.disconnect()
  }
}

/**
 * Three masters with two replicas each, a stamping writer and readers of a replica_read key through Heatsink (and a
 * plain Cluster reader beside them) across CLUSTER FAILOVER on one of the key's replicas: errors, the oldest read,
 * and whether the old master reads again as a replica.
 */
export async function replicaReadThroughClusterFailover(open: OpenClusterReader) {
  const servers = await startRedisCluster({ masters: 3, replicasPerMaster: 2 })
  const clients: Array<{ disconnect(): void }> = []
  let reader: Awaited<ReturnType<OpenClusterReader>> | undefined
  try {
    const seed = servers.nodes[0] as Node
    const namespace = testNamespace()
    const key = `{${namespace}}:stamp`
    const nodes = () => slotNodes(seed, key)
    await waitFor(async () => (await nodes()).length === 3, 'both replicas in the slot table', 15_000)
    const [oldMaster, promoted] = (await nodes()) as [Node, Node, Node]
    const writerClient = new PlainCluster(servers.nodes)
    const plain = new PlainCluster(servers.nodes)
    for (const each of [writerClient, plain]) {
      each.on('error', () => {})
      clients.push(each)
    }
    const writer = new SurvivingWriter(writerClient, key)
    await writer.start(5)
    const client = await open(servers, namespace)
    reader = client
    await publishRegistry(writerClient, createNames(namespace), { key, mitigation: 'replica_read' })
    await waitFor(() => client.mitigation(key) === 'replica_read', 'the promotion')
    await spreadHolds(client, key, nodes, 'both replicas taking reads')

    const reads = startFailoverReads(
      () => client.get(key),
      () => plain.get(key),
    )
    const failedAt = Date.now()
    const admin = new PlainRedis(promoted)
    clients.push(admin)
    await admin.cluster('FAILOVER')
    await waitFor(async () => ((await admin.role()) as string[])[0] === 'master', 'the promotion', 15_000)
    const switchedAt = Date.now()
    await waitFor(
      async () => {
        const now = await nodes()
        return now.length === 3 && now[0]?.port === promoted.port
      },
      'the new master and its two replicas in the slot table',
      15_000,
    )
    await spreadHolds(client, key, nodes, 'the old master and the other replica taking reads')
    return {
      switchMs: switchedAt - failedAt,
      // From the new master known to both replicas taking their shares (for the last 1 s of it).
      spreadAgainMs: Date.now() - switchedAt,
      ...(await reads.stop(writer)),
      oldMasterIsReplica: (await nodes()).slice(1).some((node) => node.port === oldMaster.port),
    }
  } finally {
    await reader?.close()
    for (const client of clients) client.disconnect()
    await servers.stop()
  }
}
