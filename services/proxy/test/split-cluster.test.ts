import { demoteRegistry, publishRegistry } from '@heatsink/agent/testing'
import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { COMMAND_LINES, compareCommandTable, compareFuzzOnCluster, MOST_UNSPREAD } from '@heatsink/test'
import { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, waitFor } from './support/proxy-fixture.js'

let servers: RedisCluster | undefined
const admins: Cluster[] = []

beforeAll(async () => {
  servers = await startRedisCluster({ masters: 3 })
}, 60_000)

afterAll(async () => {
  for (const admin of admins) admin.disconnect()
  await servers?.stop()
})

// A proxy in front of the cluster, a client of it, a plain client of the cluster, and how to split keys.
async function proxied() {
  const first = servers?.nodes[0]
  if (first === undefined) throw new Error('no cluster')
  const { client, namespace, proxy } = await startProxy(`redis://${first.host}:${first.port}`, {
    cluster: true,
  })
  const plain = new Cluster(servers?.nodes ?? [])
  admins.push(plain)
  await new Promise((resolve) => plain.once('ready', resolve))
  const split = async (keys: string[]) => {
    await publishRegistry(
      plain,
      createNames(namespace),
      ...keys.map((key) => ({ key, mitigation: 'split' as const, splitFactor: 4 })),
    )
    await waitFor(
      () => keys.every((key) => proxy.agent.mitigation(key) === 'split'),
      'the split registration',
    )
  }
  const demote = async (keys: string[]) => {
    await demoteRegistry(plain, createNames(namespace), ...keys)
    await waitFor(() => keys.every((key) => proxy.agent.mitigation(key) === undefined), 'the demotion')
  }
  return { client: client(), plain, namespace, split, demote }
}

describe('split keys on a Redis Cluster, through the proxy', () => {
  it('answer every command of the table as the unsplit key does, byte for byte, and leave the same state', async () => {
    const { client, plain, namespace, split } = await proxied()
    const result = await compareCommandTable({ client, plain, prefix: namespace, split })
    expect(result.differences).toEqual([])
    expect(result.compared).toBe(COMMAND_LINES.length * 5)
    expect(result.unspread.length).toBeLessThanOrEqual(MOST_UNSPREAD)
  }, 180_000)

  // Seed 6 demotes the keys and splits them again every 15 batches: a key a command folded for good spreads anew.
  it.each<{ seed: number; again: string; resplitEvery?: number }>([
    { seed: 4, again: 'never' },
    { seed: 5, again: 'never' },
    { seed: 6, again: 'every 15 batches', resplitEvery: 15 },
  ])(
    'seed $seed, keys split again $again: pipelines and transactions answer as on unsplit keys, binary values included',
    async ({ seed, resplitEvery }) => {
      const { client, plain, namespace, split, demote } = await proxied()
      const result = await compareFuzzOnCluster(
        { client, plain, namespace, split, demote, resplitEvery },
        seed,
        8,
        120,
      )
      expect(result.differences).toEqual([])
      // Some batches ran while counters were spread over shards (until a command folds them for good).
      expect(result.batchesWhileSplit).toBeGreaterThan(0)
    },
    120_000,
  )
})
