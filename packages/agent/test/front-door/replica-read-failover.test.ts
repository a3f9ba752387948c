import { describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import {
  crashPrimary,
  dropInReader,
  expectSentinelFailoverFigures,
  MAX_LAG_MS,
  type OpenReader,
  replicaReadThroughFailover,
  sentinelFailover,
} from '../support/replica-read-failover.js'

// The drop-in with the application's Sentinel options.
const dropIn: OpenReader = async (sentinels, namespace) => {
  const client = new Redis({
    sentinels: sentinels.sentinels,
    name: sentinels.masterName,
    heatsink: { namespace, maxReplicaLagMs: MAX_LAG_MS },
  })
  client.on('error', () => {})
  await client.heatsink.ready()
  return dropInReader(client)
}

describe('replica_read through a Sentinel failover (a primary, two replicas), through the drop-in', () => {
  it('SENTINEL FAILOVER: no error, no read older than maxReplicaLagMs, the set learnt again, the old primary reads again', async () => {
    const figures = await replicaReadThroughFailover(dropIn, sentinelFailover)
    console.log(`replica_read through SENTINEL FAILOVER: ${JSON.stringify(figures)}`)
    expectSentinelFailoverFigures(figures)
  }, 60_000)

  it('kill -9 of the primary: no error, no read older than maxReplicaLagMs, the promoted replica leaves the set', async () => {
    const figures = await replicaReadThroughFailover(dropIn, crashPrimary)
    console.log(`replica_read through kill -9 of the primary: ${JSON.stringify(figures)}`)
    expect(figures.errors).toBe(0)
    expect(figures.maxAgeMs).toBeLessThanOrEqual(MAX_LAG_MS)
    expect(figures.replicasAfter).toBe(1)
    expect((figures.sharesAfter[0] as number) / 200).toBeLessThanOrEqual(0.4)
  }, 120_000)
})
