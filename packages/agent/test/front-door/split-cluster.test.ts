import {
  COMMAND_LINES,
  compareCommandTable,
  compareFuzzOnCluster,
  MOST_UNSPREAD,
  testNamespace,
} from '@heatsink/test'
import { Cluster as PlainCluster } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { Cluster } from '../../src/index.js'
import { useClusterClients } from '../support/cluster-clients.js'
import { useRedisCluster } from '../support/helpers.js'
import { splitRegistration } from '../support/split-registration.js'

const servers = useRedisCluster()
const ready = useClusterClients()

// The Heatsink Cluster under test and a plain one, and how to register keys split in its namespace.
async function clients() {
  const namespace = testNamespace()
  const cluster = await ready(new Cluster(servers().nodes, { heatsink: { namespace } }))
  await cluster.heatsink.ready()
  const plain = await ready(new PlainCluster(servers().nodes))
  const { split, demote } = splitRegistration(plain, namespace, (key) => cluster.heatsink.mitigation(key))
  return { namespace, cluster, plain, split, demote }
}

// A split key's 4 shards are a quarter of the slot space apart: on 3 masters they are never all on the key's.
describe('split keys on a Redis Cluster, through the ioredis Cluster front door', () => {
  it('answer every command of the table as the unsplit key does, byte for byte, and leave the same state', async () => {
    const { namespace, cluster, plain, split } = await clients()
    const result = await compareCommandTable({ client: cluster, plain, prefix: namespace, split })
    expect(result.differences).toEqual([])
    expect(result.compared).toBe(COMMAND_LINES.length * 5)
    expect(result.unspread.length).toBeLessThanOrEqual(MOST_UNSPREAD)
  }, 180_000)

  // Seed 6 demotes the keys and splits them again every 15 batches: a key a command folded for good spreads anew.
  it.each<{ seed: number; again: string; resplitEvery?: number }>([
    { seed: 1, again: 'never' },
    { seed: 2, again: 'never' },
    { seed: 3, again: 'never' },
    { seed: 6, again: 'every 15 batches', resplitEvery: 15 },
  ])(
    'seed $seed, keys split again $again: pipelines and transactions answer as on unsplit keys, binary values included',
    async ({ seed, resplitEvery }) => {
      const { namespace, cluster, plain, split, demote } = await clients()
      const result = await compareFuzzOnCluster(
        { client: cluster, plain, namespace, split, demote, resplitEvery },
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
