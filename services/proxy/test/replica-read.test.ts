import { commandCalls, publishRegistry, StampedWriter } from '@heatsink/agent/testing'
import { type RedisSentinel, startRedisSentinel } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, waitFor } from './support/proxy-fixture.js'

// One primary and two replicas. The proxy's backend is the primary itself, so the replicas are learnt from its
// INFO replication (no Sentinel in the way). The killing test comes last.
let deployment: RedisSentinel
beforeAll(async () => {
  deployment = await startRedisSentinel({ replicas: 2 })
}, 60_000)
afterAll(async () => {
  await deployment?.stop()
})

const MAX_LAG_MS = 500
type Address = { host: string; port: number }
const primary = () => deployment.servers[0] as Address
const getCalls = (upTo = 3) =>
  Promise.all(deployment.servers.slice(0, upTo).map((server) => commandCalls(server, 'get')))

// A proxy on the primary whose `key` is replica_read and has been read from a replica, with a client of it.
async function replicaReadProxy(key: (namespace: string) => string) {
  const running = await startProxy(`redis://${primary().host}:${primary().port}`, {
    heatsink: { maxReplicaLagMs: MAX_LAG_MS },
  })
  const name = key(running.namespace)
  const direct = new Redis(primary())
  await publishRegistry(direct, createNames(running.namespace), { key: name, mitigation: 'replica_read' })
  direct.disconnect()
  await waitFor(() => running.proxy.agent.mitigation(name) === 'replica_read', 'the promotion')
  const client = running.client()
  await waitFor(async () => {
    await client.get(name)
    return running.proxy.agent.stats().replicaReads.sent > 0
  }, 'a read from a replica')
  // Both replicas in turn: each answers a share of the key's reads.
  await waitFor(
    async () => {
      const before = await getCalls()
      for (let i = 0; i < 200; i++) await client.get(name)
      const after = await getCalls()
      return after.slice(1).every((calls, i) => calls - (before[i + 1] as number) > 60)
    },
    'both replicas serving',
    12_000,
  )
  return { running, client, key: name }
}

async function readLoop(client: Redis, writer: StampedWriter, key: string, until: () => boolean) {
  const errors: unknown[] = []
  let reads = 0
  let maxAge = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (!until()) {
        const issuedAt = Date.now()
        try {
          maxAge = Math.max(maxAge, writer.ageOf(await client.get(key), issuedAt))
          reads++
        } catch (error) {
          errors.push(error)
        }
      }
    }),
  )
  return { reads, errors, maxAge }
}

describe('replica_read through the proxy, on a primary with two replicas', () => {
  it('spreads a key’s reads over both replicas: the primary serves under 40%, none older than maxReplicaLagMs', async () => {
    const { client, key } = await replicaReadProxy((namespace) => `${namespace}:spread`)
    const stamped = new StampedWriter(primary(), key)
    await stamped.start(5)
    const before = await getCalls()
    let issued = 0
    const { reads, errors, maxAge } = await readLoop(client, stamped, key, () => issued++ >= 3000)
    const after = await getCalls()
    await stamped.stop()
    const [onPrimary, ...onReplicas] = after.map((calls, i) => calls - (before[i] as number))
    console.log(
      `proxy replica_read spread: ${reads} reads; primary ${onPrimary}, replicas ${onReplicas.join(', ')} GETs (heartbeat polls included); max age ${maxAge} ms`,
    )
    expect(errors).toEqual([])
    expect((onPrimary as number) / reads).toBeLessThanOrEqual(0.4)
    for (const served of onReplicas) expect(served).toBeGreaterThan(reads * 0.25)
    expect(maxAge).toBeLessThanOrEqual(MAX_LAG_MS)
  }, 20_000)

  it('lets the writing proxy’s clients read their writes at once', async () => {
    const { running, client, key } = await replicaReadProxy((namespace) => `${namespace}:own`)
    const other = running.client()
    for (let i = 0; i < 500; i++) {
      await client.set(key, `own-${i}`)
      expect(await client.get(key)).toBe(`own-${i}`)
      // Another client of the same proxy too: the proxy is the writing process.
      expect(await other.get(key)).toBe(`own-${i}`)
    }
  }, 20_000)

  it('answers from a replica byte for byte what the primary answers, for every shape of reply', async () => {
    const { running, client, key } = await replicaReadProxy((namespace) => `${namespace}:shapes`)
    const direct = new Redis(primary())
    const binary = Buffer.from([0, 255, 13, 10, 36, 42, 128])
    await direct.set(key, binary)
    const hash = `${key}:h`
    const list = `${key}:l`
    const zset = `${key}:z`
    await direct.hset(hash, 'f', binary, 'g', '2')
    await direct.rpush(list, 'a', binary, 'c')
    await direct.zadd(zset, 1.5, 'a', 2, binary)
    await publishRegistry(
      direct,
      createNames(running.namespace),
      ...[hash, list, zset].map((name) => ({ key: name, mitigation: 'replica_read' as const })),
    )
    await waitFor(() => running.proxy.agent.mitigation(zset) === 'replica_read', 'the promotions')
    // Written by another client: on the replicas within the bound; the reads wait until they are.
    await waitFor(async () => (await client.zcard(zset)) === 2, 'the replicas to have the keys')
    const commands: Array<[string, ...Array<string | Buffer>]> = [
      ['GET', key],
      ['GETRANGE', key, '1', '3'],
      ['STRLEN', key],
      ['HGETALL', hash],
      ['HMGET', hash, 'f', 'missing', 'g'],
      ['LRANGE', list, '0', '-1'],
      ['ZRANGE', zset, '0', '-1', 'WITHSCORES'],
      ['ZSCORE', zset, 'a'],
      ['GET', `${key}:absent`],
    ]
    const sent = running.proxy.agent.stats().replicaReads.sent
    for (const [name, ...args] of commands) {
      expect(await client.callBuffer(name, ...args), name).toEqual(await direct.callBuffer(name, ...args))
    }
    // All but the absent key (not registered) were read from a replica.
    expect(running.proxy.agent.stats().replicaReads.sent - sent).toBeGreaterThanOrEqual(commands.length - 1)
    direct.disconnect()
  }, 20_000)

  it('takes a killed replica’s share away at once, with no error to the caller', async () => {
    const { client, key } = await replicaReadProxy((namespace) => `${namespace}:kill`)
    const writer = new StampedWriter(primary(), key)
    await writer.start(5)
    const start = Date.now()
    let window: number[] | undefined
    const crashed = (deployment.servers[2] as { crash(): Promise<void> }).crash()
    const measured = (async () => {
      await crashed
      await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() - start)))
      const before = await getCalls(2)
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const after = await getCalls(2)
      window = after.map((calls, i) => calls - (before[i] as number))
    })()
    const { reads, errors, maxAge } = await readLoop(client, writer, key, () => Date.now() - start > 2200)
    await measured
    await writer.stop()
    const [onPrimary, onSurvivor] = window as [number, number]
    console.log(
      `proxy replica_read killed replica: ${reads} reads, ${errors.length} errors; from 1 s to 2 s: primary ${onPrimary}, surviving replica ${onSurvivor} GETs; max age ${maxAge} ms`,
    )
    expect(errors).toEqual([])
    expect(maxAge).toBeLessThanOrEqual(MAX_LAG_MS)
    expect(onPrimary / (onPrimary + onSurvivor)).toBeLessThanOrEqual(0.4)
  }, 20_000)
})
