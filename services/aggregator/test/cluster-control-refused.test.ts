import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAggregator } from '../src/aggregator.js'
import { loadConfig } from '../src/config.js'
import { ConfigError } from '../src/errors.js'
import { silent } from './support/fixtures.js'

// A Cluster node given where one server is expected: refused at start, naming the variable, instead of a replica
// that starts and then fails every command on another master's slots with MOVED.
const postgres = useTestPostgres()
const redis = useTestRedis()
let cluster: RedisCluster
let nodeUrl: string

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 })
  const [node] = cluster.nodes
  nodeUrl = `redis://${node?.host}:${node?.port}`
}, 60_000)

afterAll(async () => {
  await cluster?.stop()
})

async function startError(env: Record<string, string>): Promise<unknown> {
  const aggregator = createAggregator(
    loadConfig({ DATABASE_URL: postgres().url, HEATSINK_NAMESPACE: 'hs-cluster-refused', PORT: '0', ...env }),
    { log: silent },
  )
  try {
    await aggregator.start()
  } catch (error) {
    return error
  } finally {
    await aggregator.stop()
  }
  return undefined
}

describe('a Redis Cluster node where one server is expected', () => {
  it('as HEATSINK_CONTROL_REDIS_URL: refused at start, naming the variable and what to do instead', async () => {
    const error = await startError({ REDIS_URL: redis().url, HEATSINK_CONTROL_REDIS_URL: nodeUrl })
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).problems).toEqual([
      `HEATSINK_CONTROL_REDIS_URL: names a node of a Redis Cluster (cluster_enabled:1), got '${nodeUrl}'; set HEATSINK_CONTROL_REDIS_CLUSTER=true to keep Heatsink's state on that Cluster`,
    ])
  })

  it('as REDIS_URL without HEATSINK_REDIS_CLUSTER=true: refused, pointing at the flag; with it, the replica starts', async () => {
    const error = await startError({ REDIS_URL: nodeUrl })
    expect((error as ConfigError).problems?.[0]).toMatch(
      /^REDIS_URL: names a node of a Redis Cluster .* set HEATSINK_REDIS_CLUSTER=true/,
    )
    expect(await startError({ REDIS_URL: nodeUrl, HEATSINK_REDIS_CLUSTER: 'true' })).toBeUndefined()
  })
})
