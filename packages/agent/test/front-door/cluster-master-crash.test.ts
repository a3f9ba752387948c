import { Redis as PlainRedis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { useClusterClients } from '../support/cluster-clients.js'
import { clusterWithHotKey } from '../support/cluster-hot-key.js'
import { useRedisCluster } from '../support/helpers.js'
import { settledWithin } from '../support/tracking-loss.js'

// The file's cluster loses a master for good (no replica takes over): one test, on a cluster of its own.
const servers = useRedisCluster()
const ready = useClusterClients()
const admins: PlainRedis[] = []
afterEach(() => {
  for (const admin of admins.splice(0)) admin.disconnect()
})

// The most a read of the Heatsink client may take beyond the slowest read of a plain ioredis client beside it,
// both sent while the master was paused and settled by its crash.
const BEYOND_PLAIN_MS = 1000

describe('kill -9 of a Cluster master (no replica) while fills on it are in flight', () => {
  it('settles every read as plain ioredis does: each fails, none waits longer than plain’s by more than the bound', async () => {
    const { cluster, plain, key, owner: address } = await clusterWithHotKey(servers().nodes, ready)
    const owner = new PlainRedis({ ...address, retryStrategy: () => null })
    owner.on('error', () => {})
    admins.push(owner)
    const pid = Number(/process_id:(\d+)/.exec(await owner.info('server'))?.[1])

    // Paused, the master holds the fill and the plain reads unanswered until it dies.
    await owner.client('PAUSE', 5000, 'ALL')
    const started = performance.now()
    const ours = Array.from({ length: 50 }, () => cluster.get(key))
    const theirs = Array.from({ length: 50 }, () => plain.get(key))
    await new Promise((resolve) => setImmediate(resolve))
    process.kill(pid, 'SIGKILL')

    // Both watched from now on, so that no rejection goes unobserved while the other side is awaited.
    const [reference, heatsink] = await Promise.allSettled([
      settledWithin(theirs, started, 15_000),
      settledWithin(ours, started, 15_000),
    ])
    if (reference.status === 'rejected') throw reference.reason
    if (heatsink.status === 'rejected') throw heatsink.reason
    const { outcomes, lastMs } = heatsink.value
    expect(lastMs).toBeLessThanOrEqual(reference.value.lastMs + BEYOND_PLAIN_MS)
    expect(outcomes.map((outcome) => outcome.status)).toEqual(
      reference.value.outcomes.map((outcome) => outcome.status),
    )
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true)
  })
})
