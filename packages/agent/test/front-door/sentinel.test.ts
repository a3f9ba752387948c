import { randomBytes } from 'node:crypto'
import { createNames } from '@heatsink/protocol'
import { Redis as PlainRedis, type RedisOptions } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent, Redis } from '../../src/index.js'
import { commandCalls, publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'
import { useRedisSentinel } from '../support/sentinel.js'

// The file's sentinels also watch a second primary, `other`, started as a deployment of its own (no replica).
const deployment = useRedisSentinel({ replicas: 1 })
const second = useRedisSentinel({ masterName: 'other', replicas: 0, sentinels: 1 })
const open: PlainRedis[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

function sentinelOptions(name: string, namespace: string): RedisOptions {
  return { sentinels: deployment().sentinels, name, heatsink: { namespace } } as RedisOptions
}

function dropIn(options: RedisOptions): Redis {
  const client = new Redis(options)
  open.push(client)
  return client
}

function plain(options: RedisOptions): PlainRedis {
  const client = new PlainRedis(options)
  open.push(client)
  return client
}

/** Reads `key` through `client` until L1 answers it (a hit counted), and returns what it answered. */
async function readFromL1(client: Redis, key: string): Promise<string | null> {
  let value: string | null = null
  await waitFor(async () => {
    const hits = client.heatsink.stats().l1Hits
    value = await client.get(key)
    return client.heatsink.stats().l1Hits > hits
  }, `an L1 hit on ${key}`)
  return value
}

/** The deployment's primary and its replica, as Sentinel names them now. */
async function servers() {
  const primary = await deployment().primary()
  const replica = deployment().servers.find((server) => server.port !== primary.port)
  if (replica === undefined) throw new Error('no replica')
  return { primary, replica }
}

/** The roles of agent `agentId`'s connections on `server`, by their names in CLIENT LIST. */
async function agentConnections(server: { host: string; port: number }, agentId: string): Promise<string[]> {
  const admin = plain({ host: server.host, port: server.port })
  const list = (await admin.client('LIST')) as string
  return [...list.matchAll(new RegExp(`name=heatsink:(\\w+):${agentId}`, 'g'))]
    .map((match) => match[1] ?? '')
    .sort()
}

describe('the drop-in on a Sentinel deployment', () => {
  it('gives clients of two masters watched by the same sentinels an agent and an L1 each', async () => {
    const other = second().servers[0]
    if (other === undefined) throw new Error('no second primary')
    for (const sentinel of deployment().sentinels) {
      const admin = plain({ ...sentinel, lazyConnect: false })
      await admin.call('SENTINEL', 'MONITOR', 'other', other.host, String(other.port), '2')
    }
    const namespace = `sentinel-${randomBytes(4).toString('hex')}`
    const key = `${namespace}:profile`
    const names = createNames(namespace)
    const mine = dropIn(sentinelOptions('mymaster', namespace))
    const theirs = dropIn(sentinelOptions('other', namespace))
    await Promise.all([mine.heatsink.ready(), theirs.heatsink.ready()])
    // Each client reached its own primary: the same key holds different values.
    await mine.set(key, 'mymaster-value')
    await theirs.set(key, 'other-value')
    await publishRegistry(mine, names, { key })
    await publishRegistry(theirs, names, { key })
    await waitFor(
      () =>
        mine.heatsink.mitigation(key) === 'local_cache' && theirs.heatsink.mitigation(key) === 'local_cache',
      'both promotions',
    )
    expect(await readFromL1(mine, key)).toBe('mymaster-value')
    expect(await readFromL1(theirs, key)).toBe('other-value')
    for (let round = 0; round < 20; round++) {
      expect(await theirs.get(key)).toBe('other-value')
      expect(await mine.get(key)).toBe('mymaster-value')
    }
    // Two agents: one client's reads are not counted by the other's.
    const theirReads = theirs.heatsink.stats().reads
    await mine.get(key)
    expect(theirs.heatsink.stats().reads).toBe(theirReads)
  })

  it('shares one agent between clients of the same master, whatever order their sentinels are listed in', async () => {
    const namespace = `sentinel-${randomBytes(4).toString('hex')}`
    const options = sentinelOptions('mymaster', namespace)
    const first = dropIn(options)
    const reversed = dropIn({ ...options, sentinels: [...deployment().sentinels].reverse() })
    await first.heatsink.ready()
    const reads = reversed.heatsink.stats().reads
    await first.get(`${namespace}:k`)
    expect(reversed.heatsink.stats().reads).toBe(reads + 1)
  })

  it("fills and tracks a replica-role client's hot keys on its replica, as its own reads, and reports to the primary", async () => {
    const namespace = `sentinel-${randomBytes(4).toString('hex')}`
    const key = `${namespace}:profile`
    const writer = plain({ sentinels: deployment().sentinels, name: 'mymaster' })
    const agentId = `replica-role-${randomBytes(4).toString('hex')}`
    const reader = dropIn({
      sentinels: deployment().sentinels,
      name: 'mymaster',
      role: 'slave',
      heatsink: { namespace, agentId },
    } as RedisOptions)
    await reader.heatsink.ready()
    const { primary, replica } = await servers()
    expect(await agentConnections(primary, agentId)).toEqual(['report'])
    expect(await agentConnections(replica, agentId)).toEqual(['sub', 'track'])

    await writer.set(key, 'v1')
    // Counted from before the promotion: its prefill of the key is a fill too.
    const getsBefore = await Promise.all([primary, replica].map((server) => commandCalls(server, 'get')))
    await publishRegistry(writer, createNames(namespace), { key })
    await waitFor(() => reader.heatsink.mitigation(key) === 'local_cache', 'the promotion')
    expect(await readFromL1(reader, key)).toBe('v1')
    // A write reaches the replica, whose tracking ends the entry: the next fill reads the new value there.
    await writer.set(key, 'v2')
    await waitFor(async () => (await reader.get(key)) === 'v2', 'the new value')
    expect(await readFromL1(reader, key)).toBe('v2')
    const [onPrimary, onReplica] = (
      await Promise.all([primary, replica].map((server) => commandCalls(server, 'get')))
    ).map((calls, index) => calls - (getsBefore[index] as number))
    expect(onPrimary).toBe(0)
    expect(onReplica).toBeGreaterThanOrEqual(2)
  })

  it('gives replica-role and primary-role clients of one master an agent each, each filling where it reads', async () => {
    const namespace = `sentinel-${randomBytes(4).toString('hex')}`
    const options = sentinelOptions('mymaster', namespace)
    const onPrimary = dropIn(options)
    const onReplica = dropIn({ ...options, role: 'slave' })
    await Promise.all([onPrimary.heatsink.ready(), onReplica.heatsink.ready()])
    const reads = onPrimary.heatsink.stats().reads
    await onReplica.get(`${namespace}:k`)
    expect(onPrimary.heatsink.stats().reads).toBe(reads)
  })

  it("createAgent on an application's replica-role Sentinel client tracks on the replica, reports to the primary", async () => {
    const agentId = `wrapped-${randomBytes(4).toString('hex')}`
    const client = plain({ sentinels: deployment().sentinels, name: 'mymaster', role: 'slave' })
    const agent = createAgent({ redis: client, namespace: `sentinel-${agentId}`, agentId })
    try {
      await agent.ready()
      const { primary, replica } = await servers()
      expect(await agentConnections(primary, agentId)).toEqual(['report'])
      expect(await agentConnections(replica, agentId)).toEqual(['sub', 'track'])
    } finally {
      await agent.close()
    }
  })
})
