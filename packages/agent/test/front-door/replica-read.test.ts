import { randomBytes } from 'node:crypto'
import { type RedisSentinel, startRedisSentinel } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { Redis as IORedis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { commandCalls, demoteRegistry, publishRegistry, StampedWriter } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'

// One primary and two replicas behind three sentinels, for the file. The killing test comes last.
let deployment: RedisSentinel
const namespace = `rr-${randomBytes(4).toString('hex')}`
const open: Array<{ quit(): Promise<unknown> }> = []
beforeAll(async () => {
  deployment = await startRedisSentinel({ replicas: 2 })
}, 60_000)
afterAll(async () => {
  await deployment?.stop()
})
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

const MAX_LAG_MS = 500
const primary = () => deployment.servers[0] as { host: string; port: number }
const replicas = () => deployment.servers.slice(1)

// A drop-in client of the deployment (through Sentinel) whose `key` is replica_read, once each of the first `serving`
// replicas takes a share of its reads.
async function replicaReadClient(key: string, serving = 2): Promise<Redis> {
  const client = new Redis({
    sentinels: deployment.sentinels,
    name: deployment.masterName,
    heatsink: { namespace, maxReplicaLagMs: MAX_LAG_MS },
  })
  const plain = new IORedis(primary())
  open.push(client, plain)
  await client.heatsink.ready()
  await publishRegistry(plain, createNames(namespace), { key, mitigation: 'replica_read' })
  await waitFor(() => client.heatsink.mitigation(key) === 'replica_read', 'the promotion')
  await waitFor(
    async () => {
      await client.get(key)
      return client.heatsink.stats().replicaReads.sent > 0
    },
    'a read from a replica',
    5000,
  )
  await waitFor(
    async () => (await servingShares(client, key, 1 + serving)).slice(1).every((share) => share > 0.3),
    `${serving} replicas serving`,
    12_000,
  )
  return client
}

/** Reads `key` with `concurrency` callers until `until` holds; every read's outcome, age and latency. */
async function readLoop(
  client: Redis,
  writer: StampedWriter,
  key: string,
  concurrency: number,
  until: () => boolean,
) {
  const reads: Array<{ issuedAt: number; age: number; ms: number }> = []
  const errors: unknown[] = []
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!until()) {
        const issuedAt = Date.now()
        try {
          const value = await client.get(key)
          reads.push({ issuedAt, age: writer.ageOf(value, issuedAt), ms: Date.now() - issuedAt })
        } catch (error) {
          errors.push(error)
        }
      }
    }),
  )
  // A reduce, not Math.max(...reads): a long loop's hundreds of thousands of reads overflow the call's arguments.
  return { reads, errors, maxAge: reads.reduce((max, read) => Math.max(max, read.age), 0) }
}

// GETs each server answered so far; `upTo` leaves out the servers past it (the killed replica).
const getCalls = (upTo = 3) =>
  Promise.all(deployment.servers.slice(0, upTo).map((server) => commandCalls(server, 'get')))

describe('replica_read through the drop-in, on Sentinel with two replicas', () => {
  it('spreads a key’s reads over both replicas: the primary serves under 40%, none older than maxReplicaLagMs', async () => {
    const key = `${namespace}:spread`
    const writer = new StampedWriter(primary(), key)
    await writer.start(5)
    const client = await replicaReadClient(key)
    const before = await getCalls()
    const reads = 3000
    let issued = 0
    const { errors, maxAge } = await readLoop(client, writer, key, 8, () => issued++ >= reads)
    const after = await getCalls()
    await writer.stop()
    const [onPrimary, ...onReplicas] = after.map((calls, i) => calls - (before[i] as number))
    const done = reads - errors.length
    console.log(
      `replica_read spread: ${done} reads; primary ${onPrimary}, replicas ${onReplicas.join(', ')} GETs (heartbeat polls included); max age ${maxAge} ms`,
    )
    expect(errors).toEqual([])
    expect((onPrimary as number) / done).toBeLessThanOrEqual(0.4)
    for (const served of onReplicas) expect(served).toBeGreaterThan(done * 0.25)
    expect(maxAge).toBeLessThanOrEqual(MAX_LAG_MS)
  }, 20_000)

  it('lets the writing process read its own writes at once', async () => {
    const key = `${namespace}:own`
    const client = await replicaReadClient(key)
    for (let i = 0; i < 300; i++) {
      await client.set(key, `own-${i}`)
      expect(await client.get(key)).toBe(`own-${i}`)
    }
    // The replicas still take the reads between writes once they have them.
    const sent = client.heatsink.stats().replicaReads.sent
    await waitFor(async () => {
      expect(await client.get(key)).toBe('own-299')
      return client.heatsink.stats().replicaReads.sent > sent
    }, 'a read from a replica after the writes')
  }, 20_000)

  it('closes its replica connections and stops its heartbeat once no key is replica_read', async () => {
    const key = `${namespace}:demoted`
    const client = await replicaReadClient(key)
    // Heartbeats of agents of the tests before linger until they expire: only a value that changes is written now.
    const beating = async () => {
      const before = await heartbeatValues()
      await new Promise((resolve) => setTimeout(resolve, 300))
      return (await heartbeatValues()) !== before
    }
    expect(await beating()).toBe(true)
    expect(await replicaConnections()).toBeGreaterThan(0)
    const plain = new IORedis(primary())
    open.push(plain)
    // Every replica_read key of the file so far.
    await demoteRegistry(plain, createNames(namespace), `${namespace}:spread`, `${namespace}:own`, key)
    await waitFor(() => client.heatsink.mitigation(key) === undefined, 'the demotion')
    await waitFor(async () => (await replicaConnections()) === 0, 'the replica connections closed')
    expect(await beating()).toBe(false)
    const sent = client.heatsink.stats().replicaReads.sent
    for (let i = 0; i < 20; i++) await client.get(key)
    expect(client.heatsink.stats().replicaReads.sent).toBe(sent)
  })

  it('takes a stalled replica’s share away within 1 s, every read answered', async () => {
    const key = `${namespace}:stall`
    const writer = new StampedWriter(primary(), key)
    await writer.start(5)
    const client = await replicaReadClient(key)
    const stalled = replicas()[0] as { host: string; port: number }
    const pid = Number(/process_id:(\d+)/.exec(await infoOf(stalled, 'server'))?.[1])
    const start = Date.now()
    process.kill(pid, 'SIGSTOP')
    let slowest = { issuedAt: 0, ms: 0 }
    try {
      const { reads, errors, maxAge } = await readLoop(
        client,
        writer,
        key,
        4,
        () => Date.now() - start > 2000,
      )
      const slow = reads.filter((r) => r.ms > 100)
      slowest = slow.reduce((a, b) => (b.ms > a.ms ? b : a), slowest)
      const lastSlow = Math.max(0, ...slow.map((r) => r.issuedAt - start))
      console.log(
        `replica_read stalled replica: ${reads.length} reads, ${errors.length} errors; slowest ${slowest.ms} ms; last read held by the stalled replica issued ${lastSlow} ms after the stall; max age ${maxAge} ms`,
      )
      expect(errors).toEqual([])
      expect(maxAge).toBeLessThanOrEqual(MAX_LAG_MS)
      // It was taking reads: some waited for it until their deadline, then were answered by the primary.
      expect(slow.length).toBeGreaterThan(0)
      expect(lastSlow).toBeLessThanOrEqual(1000)
    } finally {
      process.kill(pid, 'SIGCONT')
      await writer.stop()
    }
  }, 20_000)

  it('takes a killed replica’s share away at once, with no error to the caller', async () => {
    const key = `${namespace}:kill`
    const writer = new StampedWriter(primary(), key)
    await writer.start(5)
    const client = await replicaReadClient(key)
    const start = Date.now()
    let window: number[] | undefined
    const crashed = (deployment.servers[2] as { crash(): Promise<void> }).crash()
    const measureWindow = (async () => {
      await crashed
      await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() - start)))
      const before = await Promise.all(deployment.servers.slice(0, 2).map((s) => commandCalls(s, 'get')))
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const after = await Promise.all(deployment.servers.slice(0, 2).map((s) => commandCalls(s, 'get')))
      window = after.map((calls, i) => calls - (before[i] as number))
    })()
    const { reads, errors, maxAge } = await readLoop(client, writer, key, 4, () => Date.now() - start > 2200)
    await measureWindow
    await writer.stop()
    const [onPrimary, onSurvivor] = window as [number, number]
    const inWindow = reads.filter((r) => r.issuedAt >= start + 1000 && r.issuedAt < start + 2000).length
    console.log(
      `replica_read killed replica: ${reads.length} reads, ${errors.length} errors, ${client.heatsink.stats().replicaReads.fellBack} fell back to the primary; from 1 s to 2 s: primary ${onPrimary}, surviving replica ${onSurvivor} GETs of ${inWindow}; max age ${maxAge} ms`,
    )
    expect(errors).toEqual([])
    expect(maxAge).toBeLessThanOrEqual(MAX_LAG_MS)
    expect(onPrimary / inWindow).toBeLessThanOrEqual(0.4)
  }, 20_000)
  it('takes a lagging replica’s share away within 1 s, with no error and no read older than the bound', async () => {
    const key = `${namespace}:lag`
    const writer = new StampedWriter(primary(), key)
    await writer.start(5)
    const client = await replicaReadClient(key, 1)
    // The replica left (the other was killed) leaves its primary for 2 s: it keeps answering reads, from data that falls behind (Sentinel, which
    // looks at replicas every 10 s, still lists it as a replica: only the heartbeat can tell).
    const lagging = replicas()[0] as { host: string; port: number }
    const detached = new IORedis(lagging)
    open.push(detached)
    const start = Date.now()
    await detached.replicaof('NO', 'ONE')
    const reattach = setTimeout(() => void detached.replicaof(primary().host, primary().port), 2200)
    let window: number[] | undefined
    const measureWindow = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const before = await getCalls(2)
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const after = await getCalls(2)
      window = after.map((calls, i) => calls - (before[i] as number))
    })()
    const { reads, errors, maxAge } = await readLoop(client, writer, key, 4, () => Date.now() - start > 2200)
    await measureWindow
    clearTimeout(reattach)
    await detached.replicaof(primary().host, primary().port)
    await writer.stop()
    const [onPrimary, onLagging] = window as [number, number]
    const inWindow = reads.filter((r) => r.issuedAt >= start + 1000 && r.issuedAt < start + 2000).length
    console.log(
      `replica_read lagging replica: ${reads.length} reads, 0 errors expected (${errors.length}); from 1 s to 2 s after it left its primary: primary ${onPrimary}, lagging ${onLagging} GETs of ${inWindow} reads; max age ${maxAge} ms`,
    )
    expect(errors).toEqual([])
    expect(maxAge).toBeLessThanOrEqual(MAX_LAG_MS)
    // Its heartbeat polls (10 a second) are all the lagging replica still answers.
    expect(onLagging).toBeLessThanOrEqual(15)
    // With no other replica, the primary answers (the server's second and the readers' are not quite the same).
    expect(onPrimary).toBeGreaterThanOrEqual(inWindow * 0.9)
  }, 20_000)
})

// Connections of this file's agents to the replicas (CLIENT LIST names them heatsink:replica:<agentId>).
async function replicaConnections(): Promise<number> {
  let count = 0
  for (const server of replicas()) {
    const redis = new IORedis(server)
    try {
      const list = (await redis.client('LIST')) as string
      count += list.split('\n').filter((line) => line.includes('name=heatsink:replica:')).length
    } finally {
      redis.disconnect()
    }
  }
  return count
}

// Every heartbeat on the primary and its value, as one string.
async function heartbeatValues(): Promise<string> {
  const redis = new IORedis(primary())
  try {
    const keys = (await redis.keys(`${namespace}:heartbeat:*`)).sort()
    return JSON.stringify(keys.length === 0 ? [] : [keys, await redis.mget(keys)])
  } finally {
    redis.disconnect()
  }
}

// The share of 200 reads of `key` each server answered (heartbeat polls included).
async function servingShares(client: Redis, key: string, servers: number): Promise<number[]> {
  const before = await getCalls(servers)
  for (let i = 0; i < 200; i++) await client.get(key)
  const after = await getCalls(servers)
  return after.map((calls, i) => (calls - (before[i] as number)) / 200)
}

async function infoOf(server: { host: string; port: number }, section: string): Promise<string> {
  const redis = new IORedis(server)
  try {
    return await redis.info(section)
  } finally {
    redis.disconnect()
  }
}
