import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import type { NodesView } from '@heatsink/protocol'
import { useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Aggregator } from '../src/aggregator.js'
import { until } from './support/fixtures.js'
import { nodeSamplingAggregator, nodesOf } from './support/node-view.js'

const postgres = useTestPostgres({ scope: 'all' })

// A private Cluster of 3 masters with a replica each: the node view lists all six with the roles and masters
// CLUSTER NODES gives, and each replica's lag from its master's INFO.
describe('the node view of a Cluster with replicas', () => {
  let servers: RedisCluster
  let aggregator: Aggregator

  beforeAll(async () => {
    servers = await startRedisCluster({ masters: 3, replicasPerMaster: 1 })
    const [seed] = servers.nodes
    aggregator = await nodeSamplingAggregator(postgres().url, {
      REDIS_URL: `redis://${seed?.host}:${seed?.port}`,
      HEATSINK_REDIS_CLUSTER: 'true',
    })
  }, 60_000)

  afterAll(async () => {
    await aggregator?.stop()
    await servers?.stop()
  })

  it('lists every master and replica as CLUSTER NODES does, with the replicas’ lag', async () => {
    // What the Cluster says of itself, asked of a node directly: address -> [role, master's address].
    const seed = new Redis(servers.nodes[0]?.port as number, servers.nodes[0]?.host as string)
    const lines = String(await seed.call('CLUSTER', 'NODES'))
      .trim()
      .split('\n')
    seed.disconnect()
    const addressOf = new Map(
      lines.map((line) => line.split(' ')).map(([id, address]) => [id, address?.split('@')[0]]),
    )
    const expected = Object.fromEntries(
      lines
        .map((line) => line.split(' '))
        .map(([, address, flags, masterId]) => {
          const replica = flags?.split(',').includes('slave')
          return [
            address?.split('@')[0],
            replica ? ['replica', addressOf.get(masterId as string)] : ['master', null],
          ]
        }),
    )
    let view: NodesView | undefined
    await until(
      'six nodes with figures',
      async () => {
        view = await nodesOf(aggregator)
        return (
          view?.nodes.length === 6 &&
          view.nodes.every((node) => node.up && node.figures?.opsPerSecond != null)
        )
      },
      15_000,
    )
    const shown = Object.fromEntries(view?.nodes.map((node) => [node.node, [node.role, node.master]]) ?? [])
    expect(shown).toEqual(expected)
    for (const node of view?.nodes ?? []) {
      if (node.role === 'master') {
        expect(node.figures?.replicationLagSeconds).toBeNull()
        continue
      }
      // Replicas acknowledge every second.
      expect(node.figures?.replicationLagSeconds).toBeGreaterThanOrEqual(0)
      expect(node.figures?.replicationLagSeconds).toBeLessThanOrEqual(3)
      expect(node.figures?.replicationBehindBytes).toBeGreaterThanOrEqual(0)
    }
    expect(view?.imbalance).toBeGreaterThanOrEqual(1)
  }, 60_000)
})
