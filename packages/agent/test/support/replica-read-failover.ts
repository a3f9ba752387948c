import { randomBytes } from 'node:crypto'
import { type ClusterNode, type RedisSentinel, startRedisSentinel } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { Redis as IORedis } from 'ioredis'
import { expect } from 'vitest'
import { publishRegistry } from '../../src/testing.js'
import { getsOn, spreadHolds, startFailoverReads } from './failover-reads.js'
import { waitFor } from './helpers.js'
import { SurvivingWriter } from './surviving-writer.js'

/** The largest replication lag a replica may have and take replica_read reads, in these scenarios. */
export const MAX_LAG_MS = 500

/** A Heatsink client under test, opened on a Sentinel deployment (the drop-in, or a client of the proxy). */
export interface ReplicaReader {
  get(key: string): Promise<string | null>
  mitigation(key: string): string | undefined
  /** Closes it, before the deployment stops (a client left open meanwhile only reports the servers gone). */
  close(): Promise<void> | void
}

/** Opens the reader on `sentinels` with `namespace` and maxReplicaLagMs = MAX_LAG_MS, ready to read. */
export type OpenReader = (sentinels: RedisSentinel, namespace: string) => Promise<ReplicaReader>

const address = (node: ClusterNode) => `${node.host}:${node.port}`

/**
 * A primary and two replicas behind three sentinels, new for each run (a failover changes who is who); `run` gets
 * a plain Sentinel client opener whose clients, and the deployment, are closed when it ends.
 */
async function withDeployment<T>(
  run: (
    sentinels: RedisSentinel,
    plain: () => IORedis,
    opened: (reader: ReplicaReader) => ReplicaReader,
  ) => Promise<T>,
): Promise<T> {
  const deployment = await startRedisSentinel({ replicas: 2 })
  const open: Array<{ disconnect(): void }> = []
  const readers: ReplicaReader[] = []
  // A Sentinel client with the application's options; its errors are counted by the caller.
  const plain = () => {
    const client = new IORedis({ sentinels: deployment.sentinels, name: deployment.masterName })
    client.on('error', () => {})
    open.push(client)
    return client
  }
  const opened = (reader: ReplicaReader) => {
    readers.push(reader)
    return reader
  }
  try {
    return await run(deployment, plain, opened)
  } finally {
    await Promise.all(readers.map((reader) => reader.close()))
    for (const client of open) client.disconnect()
    await deployment.stop()
  }
}

/**
 * Runs a stamping writer and readers of a replica_read key through Heatsink (and a plain Sentinel reader beside
 * them) across `failover`, and measures what a user would see: errors, the oldest read, and when the replica set
 * was learnt again (the new primary takes no replica reads; every other server does).
 */
export function replicaReadThroughFailover(
  open: OpenReader,
  failover: (sentinels: RedisSentinel) => Promise<void>,
) {
  return withDeployment(async (sentinels, plainClient, opened) => {
    const namespace = `rrf-${randomBytes(4).toString('hex')}`
    const key = `${namespace}:stamp`
    const writer = new SurvivingWriter(plainClient(), key)
    await writer.start(5)
    const client = opened(await open(sentinels, namespace))
    await publishRegistry(plainClient(), createNames(namespace), { key, mitigation: 'replica_read' })
    await waitFor(() => client.mitigation(key) === 'replica_read', 'the promotion')
    const first = await sentinels.primary()
    const others = () => sentinels.servers.filter((server) => address(server) !== address(first))
    await spreadHolds(client, key, async () => [first, ...others()], 'both replicas taking reads')

    const plain = plainClient()
    const reads = startFailoverReads(
      () => client.get(key),
      () => plain.get(key),
    )
    const failedAt = Date.now()
    await failover(sentinels)
    let next = await waitForNewPrimary(sentinels, first)
    const switchedAt = Date.now()
    // Learnt again: every other live server takes a share of the reads and the new primary at most 40% (the
    // readers' loops go on meanwhile, spread the same way); the new primary holds no replica connection of the
    // agent (Sentinel's CLIENT KILL on it ends them for a moment too: it must stay so past the 1 s refresh).
    const alive = async () =>
      (await Promise.all(sentinels.servers.map(answers))).filter((s) => s !== undefined)
    const readers = async () => (await alive()).filter((server) => address(server) !== address(next))
    await spreadHolds(client, key, async () => [next, ...(await readers())], 'every replica taking reads')
    const spreadOn = next
    const allReadMs = Date.now() - switchedAt
    const measured = await reads.stop(writer)
    // 20 s: the agent asks one sentinel, and one that did not run the failover learns of it from the others'
    // hello messages (every 2 s, slower on a loaded machine).
    // Judged on the primary the sentinels name now: after a crash on a loaded machine a promotion can time out and
    // the sentinels promote the other replica, and the one promoted first is a replica again (and keeps its reads).
    await waitFor(
      async () => {
        next = await sentinels.primary()
        if ((await replicaConnections(next)) > 0) return false
        await new Promise((resolve) => setTimeout(resolve, 1100))
        return (await replicaConnections(next)) === 0 && address(await sentinels.primary()) === address(next)
      },
      'the promoted replica out of the replica set',
      20_000,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}; ${await replicaSetViews(sentinels, next)}`)
    })
    const droppedMs = Date.now() - switchedAt
    // After a second promotion the first promoted server resyncs as a replica, and takes no reads until its lag
    // is within the bound again: the shares are measured once the set is learnt for this primary too.
    if (address(next) !== address(spreadOn)) {
      await spreadHolds(
        client,
        key,
        async () => [next, ...(await readers())],
        'the replicas of the second primary',
      )
    }
    // GETs of 200 reads once settled: the new primary first, then the replicas (heartbeat polls included).
    const shares = await getsOn(client, key, [next, ...(await readers())])
    return {
      switchMs: switchedAt - failedAt,
      ...measured,
      // From the new primary known to every replica taking its share (for the last 1 s of it).
      everyReplicaReadingMs: allReadMs,
      promotedOutByMs: droppedMs,
      sharesAfter: shares,
      replicasAfter: (await readers()).length,
    }
  })
}

/** The drop-in (a Redis or Cluster of Heatsink's) as the reader under test. */
export function dropInReader(client: {
  get(key: string): Promise<string | null>
  heatsink: { mitigation(key: string): string | undefined }
  disconnect(): void
}): ReplicaReader {
  return {
    get: (key) => client.get(key),
    mitigation: (key) => client.heatsink.mitigation(key),
    close: () => client.disconnect(),
  }
}

/**
 * What a SENTINEL FAILOVER may cost a replica_read key's readers: no error, no read older than the bound, and the
 * replica set learnt again, the old primary one of the two replicas taking reads and the new primary under 40%.
 */
export function expectSentinelFailoverFigures(
  figures: Awaited<ReturnType<typeof replicaReadThroughFailover>>,
): void {
  expect(figures.errors).toBe(0)
  expect(figures.maxAgeMs).toBeLessThanOrEqual(MAX_LAG_MS)
  expect(figures.replicasAfter).toBe(2)
  expect((figures.sharesAfter[0] as number) / 200).toBeLessThanOrEqual(0.4)
  for (const share of figures.sharesAfter.slice(1)) expect(share / 200).toBeGreaterThanOrEqual(0.25)
}

/** SENTINEL FAILOVER, asked of the first sentinel. */
export async function sentinelFailover(sentinels: RedisSentinel): Promise<void> {
  const sentinel = new IORedis(sentinels.sentinels[0] as ClusterNode)
  await sentinel.call('SENTINEL', 'FAILOVER', sentinels.masterName)
  sentinel.disconnect()
}

/** kill -9 of the primary. */
export async function crashPrimary(sentinels: RedisSentinel): Promise<void> {
  const first = await sentinels.primary()
  await sentinels.servers.find((server) => address(server) === address(first))?.crash()
}

async function waitForNewPrimary(sentinels: RedisSentinel, first: ClusterNode): Promise<ClusterNode> {
  let next = first
  await waitFor(
    async () => {
      next = await sentinels.primary()
      return address(next) !== address(first)
    },
    'the new primary',
    20_000,
  )
  return next
}

// The server, if it answers now (a killed one does not).
async function answers(server: ClusterNode): Promise<ClusterNode | undefined> {
  const redis = new IORedis({ ...server, retryStrategy: () => null, lazyConnect: true })
  redis.on('error', () => {})
  try {
    await redis.connect()
    await redis.ping()
    return server
  } catch {
    return undefined
  } finally {
    redis.disconnect()
  }
}

// The agent's replica connections on a server (CLIENT LIST names them heatsink:replica:<agentId>).
async function replicaConnections(server: ClusterNode): Promise<number> {
  const redis = new IORedis(server)
  try {
    const list = (await redis.client('LIST')) as string
    return list.split('\n').filter((line) => line.includes('name=heatsink:replica:')).length
  } finally {
    redis.disconnect()
  }
}

// What each sentinel lists as the group's replicas, and who holds replica connections on `server`: the facts a
// failure to drop the promoted replica comes down to.
async function replicaSetViews(sentinels: RedisSentinel, server: ClusterNode): Promise<string> {
  const views = await Promise.all(
    sentinels.sentinels.map(async (node) => {
      const sentinel = new IORedis({ ...node, retryStrategy: () => null })
      sentinel.on('error', () => {})
      try {
        const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', sentinels.masterName)) as string[][]
        const listed = replicas.map(
          (flat) => `${flat[flat.indexOf('name') + 1]}(${flat[flat.indexOf('flags') + 1]})`,
        )
        return `sentinel ${address(node)} lists ${listed.join(' ')}`
      } catch (error) {
        return `sentinel ${address(node)}: ${(error as Error).message}`
      } finally {
        sentinel.disconnect()
      }
    }),
  )
  const redis = new IORedis(server)
  const names = ((await redis.client('LIST')) as string).match(/name=heatsink:replica:\S*/g) ?? []
  redis.disconnect()
  return `${views.join('; ')}; on ${address(server)}: ${names.join(' ')}`
}
