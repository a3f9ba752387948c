import { publishRegistry } from '@heatsink/agent/testing'
import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  killTrackingDuringFill,
  settledWithin,
  trackingClientId,
} from '../../../packages/agent/test/support/tracking-loss.js'
import { calculateSlot } from '../src/cluster/key-slot.js'
import { type RunningProxy, startProxy, usePrivateRedis, waitFor } from './support/proxy-fixture.js'

const redis = usePrivateRedis()
let cluster: RedisCluster | undefined
beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 })
}, 60_000)
afterAll(async () => {
  await cluster?.stop()
})
const admins: Array<Redis | Cluster> = []
afterEach(() => {
  for (const admin of admins.splice(0)) admin.disconnect()
})

// From the kill answered: every read that waited on the lost fill answered from Redis. Loose for a loaded
// machine; before, they waited forever.
const AFTER_KILL_MS = 1000

/**
 * Promotes `key` (holding `value`) on the proxy's agent, fills it once through the tracking connection (so that
 * connection is up) and writes it again, so that the next fill is the reads'.
 */
async function promote(direct: Redis | Cluster, running: RunningProxy, key: string, value: string) {
  const { proxy, namespace } = running
  await publishRegistry(direct, createNames(namespace), { key })
  await waitFor(() => proxy.agent.mitigation(key) === 'local_cache', 'the promotion')
  const client = running.client()
  await waitFor(async () => {
    expect(await client.get(key)).toBe(value)
    return proxy.agent.stats().l1Entries >= 1
  }, 'a fill')
  client.disconnect()
  await direct.set(key, value)
  await waitFor(() => proxy.agent.stats().l1Entries === 0, 'the entry invalidated')
}

/** Reads through the proxy while its tracking connection on `owner` is killed; each must get `value`. */
async function readsSurviveTheKill(owner: Redis, running: RunningProxy, key: string, value: string) {
  const client = running.client()
  // Connected before the pause: its ready check would otherwise wait out the pause, and the kill with it.
  await client.ping()
  const { reads, killedAt } = await killTrackingDuringFill(owner, await trackingClientId(owner), () => [
    ...Array.from({ length: 50 }, () => client.get(key)),
  ])
  const { outcomes } = await settledWithin(reads, killedAt, AFTER_KILL_MS)
  expect(outcomes).toEqual(Array(50).fill({ status: 'fulfilled', value }))
  expect(running.proxy.agent.stats().l1FillsAbandoned).toBe(1)
  // L1 serves again once tracking is back.
  await waitFor(async () => {
    const hits = running.proxy.agent.stats().l1Hits
    expect(await client.get(key)).toBe(value)
    return running.proxy.agent.stats().l1Hits > hits
  }, 'an L1 hit after the reconnect')
}

describe('the proxy, when its tracking connection is lost during a fill', () => {
  it('answers every GET waiting on the fill from Redis (standalone backend)', async () => {
    const running = await startProxy(redis().url, { heatsink: { l1: { fillTimeoutMs: 60_000 } } })
    const direct = new Redis(redis().url)
    admins.push(direct)
    const key = `${running.namespace}:hot`
    await direct.set(key, 'value')
    await promote(direct, running, key, 'value')
    await readsSurviveTheKill(direct, running, key, 'value')
  })

  it('answers every GET waiting on the fill from the master that owns the key (Cluster backend)', async () => {
    const nodes = cluster?.nodes ?? []
    const seed = `redis://${nodes[0]?.host}:${nodes[0]?.port}`
    const running = await startProxy(seed, { cluster: true, heatsink: { l1: { fillTimeoutMs: 60_000 } } })
    const direct = new Cluster(nodes)
    admins.push(direct)
    await new Promise((resolve) => direct.once('ready', resolve))
    const key = `${running.namespace}:hot`
    await direct.set(key, 'value')
    await promote(direct, running, key, 'value')
    const [host, port] = (direct.slots[calculateSlot(key)]?.[0] ?? '').split(':')
    const owner = new Redis({ host, port: Number(port) })
    admins.push(owner)
    await readsSurviveTheKill(owner, running, key, 'value')
  })
})
