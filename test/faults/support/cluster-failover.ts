import { Cluster } from '@heatsink/agent'
import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { redisClusterSlot } from '@heatsink/protocol'
import { Cluster as PlainCluster, Redis as PlainRedis } from 'ioredis'
import { afterEach } from 'vitest'
import { type ScenarioClients, scenarioClients } from './failover-scenario.js'
import { until } from './until.js'

/** A 3-master Cluster with a replica each per test of the calling file, stopped after it. */
export function useClusterPerTest(): () => Promise<RedisCluster> {
  let cluster: RedisCluster | undefined
  afterEach(async () => {
    await cluster?.stop()
    cluster = undefined
  })
  return async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 })
    return cluster
  }
}

/** The scenario's clients on `servers`: a plain writer and reader, and Heatsink's Cluster. */
export function clientsOn(servers: RedisCluster) {
  return (key: string, namespace: string): ScenarioClients => {
    const writer = new PlainCluster(servers.nodes)
    const plain = new PlainCluster(servers.nodes)
    const heatsink = new Cluster(servers.nodes, { heatsink: { namespace } })
    return scenarioClients(key, writer, plain, heatsink)
  }
}

/** Resolves with the moment (performance.now()) the key's replica answers ROLE as a master. */
export async function promoted(replica: number): Promise<number> {
  const client = new PlainRedis({ host: '127.0.0.1', port: replica })
  try {
    await until(
      'the replica promoted',
      async () => ((await client.role()) as string[])[0] === 'master',
      15_000,
      5,
    )
    return performance.now()
  } finally {
    client.disconnect()
  }
}

/** The master and replica serving `key`'s slot, as CLUSTER SLOTS gives them now. */
export async function slotOwners(
  servers: RedisCluster,
  key: string,
): Promise<{ master: number; replica: number }> {
  const slotOf = redisClusterSlot(key)
  const admin = new PlainRedis({ ...servers.nodes[0] })
  try {
    const ranges = (await admin.cluster('SLOTS')) as unknown as [number, number, ...[string, number][]][]
    const range = ranges.find(([first, last]) => first <= slotOf && slotOf <= last)
    const [, , master, replica] = range ?? []
    if (master === undefined || replica === undefined) throw new Error(`no master and replica for ${slotOf}`)
    return { master: master[1], replica: replica[1] }
  } finally {
    admin.disconnect()
  }
}
