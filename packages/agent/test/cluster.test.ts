import { createNames, redisClusterSlot } from '@heatsink/protocol'
import { ManualClock } from '@heatsink/sketch'
import { testNamespace } from '@heatsink/test'
import { Cluster, Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { type Agent, createAgent } from '../src/index.js'
import { publishRegistry } from '../src/testing.js'
import { captureLog, controlledLoader, useRedisCluster, waitFor } from './support/helpers.js'

const servers = useRedisCluster()
const clients: Array<Redis | Cluster> = []
const agents: Agent[] = []

afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()))
  for (const client of clients.splice(0)) client.disconnect()
})

function nodes() {
  return servers().nodes
}

async function cluster(): Promise<Cluster> {
  const client = new Cluster(nodes())
  clients.push(client)
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve)
    client.once('error', reject)
  })
  return client
}

function node(address: string): Redis {
  const [host, port] = address.split(':')
  const client = new Redis({ host, port: Number(port) })
  clients.push(client)
  return client
}

/** Keys named `<namespace>:<label><n>` whose slots belong to every master, one key per master. */
function keysOnEveryMaster(client: Cluster, namespace: string, label: string): string[] {
  const byOwner = new Map<string, string>()
  for (let n = 0; byOwner.size < 3; n++) {
    const key = `${namespace}:${label}${n}`
    const owner = client.slots[redisClusterSlot(key)]?.[0]
    if (owner !== undefined && !byOwner.has(owner)) byOwner.set(owner, key)
  }
  return [...byOwner.values()]
}

async function agentWithL1(label: string) {
  const namespace = testNamespace()
  const data = await cluster()
  const plain = await cluster()
  const keys = keysOnEveryMaster(data, namespace, label)
  for (const key of keys) await plain.set(key, `${key}=1`)
  const capture = captureLog()
  const agent = createAgent({
    redis: data,
    namespace,
    agentId: label,
    log: capture.log,
    l1: { maxTtlMs: 60_000 },
  })
  agents.push(agent)
  await agent.ready()
  await publishRegistry(plain, createNames(namespace), ...keys.map((key) => ({ key })))
  await waitFor(() => agent.stats().l1Entries === keys.length, 'L1 filled on every master')
  for (const key of keys) expect(await agent.get(key)).toBe(`${key}=1`)
  expect(agent.stats().l1Hits).toBe(keys.length)
  return { agent, data, plain, keys, capture }
}

describe('on a Redis Cluster', () => {
  it('serves L1 for keys on every master, and a direct write on the cluster invalidates it', async () => {
    const { agent, plain, keys } = await agentWithL1('direct')
    for (const key of keys) await plain.set(key, `${key}=2`)
    await waitFor(
      async () =>
        (await Promise.all(keys.map((key) => agent.get(key)))).every((v, i) => v === `${keys[i]}=2`),
      'every key to be invalidated',
      500,
    )
    expect(agent.stats().l1Invalidations.tracking).toBe(keys.length)
    // A write through the agent evicts at once, whichever master holds the key.
    const [first] = keys as [string]
    expect(await agent.set(first, 'through-agent')).toBe('OK')
    expect(await agent.get(first)).toBe('through-agent')
  })

  it('empties L1 when a slot of an L1 key migrates to another master, then serves from the new map', async () => {
    const { agent, data, plain, keys } = await agentWithL1('migrate')
    const [moving] = keys as [string]
    const slot = redisClusterSlot(moving)
    const from = data.slots[slot]?.[0] as string
    const to = data.slots.find((owners) => owners[0] !== from)?.[0] as string
    const source = node(from)
    const target = node(to)
    const sourceId = await source.cluster('MYID')
    const targetId = await target.cluster('MYID')
    const [toHost, toPort] = to.split(':') as [string, string]

    await target.cluster('SETSLOT', slot, 'IMPORTING', sourceId)
    await source.cluster('SETSLOT', slot, 'MIGRATING', targetId)
    const inSlot = (await source.cluster('GETKEYSINSLOT', slot, 100)) as string[]
    await source.migrate(toHost, toPort, '', 0, 5000, 'KEYS', ...inSlot)
    for (const address of nodes().map((n) => `${n.host}:${n.port}`)) {
      await node(address).cluster('SETSLOT', slot, 'NODE', targetId)
    }

    // MIGRATE deleted the key on the old master, whose tracking told the agent.
    await waitFor(() => agent.stats().l1Invalidations.tracking >= 1, 'the migrated key invalidated')
    // The agent still routes the slot to the old master: its fill is answered MOVED, and nothing in L1
    // (the keys on the other masters included) can be vouched for any longer.
    expect(await agent.get(moving)).toBe(`${moving}=1`)
    await waitFor(() => agent.stats().l1Invalidations.channelLoss >= keys.length - 1, 'L1 emptied')

    await waitFor(() => agent.stats().invalidationChannelUp, 'the per-master connections rebuilt')
    await waitFor(() => agent.stats().l1Entries === keys.length, 'L1 refilled under the new map')
    expect(await agent.get(moving)).toBe(`${moving}=1`)
    // Tracking now covers the key on its new master.
    await plain.set(moving, 'moved-and-written')
    await waitFor(async () => (await agent.get(moving)) === 'moved-and-written', 'the invalidation', 500)
  })

  it('empties L1 when the subscriber connections are killed, and refills once they are back', async () => {
    const { agent, plain, keys, capture } = await agentWithL1('killed')
    const lost = capture.next('invalidation channel lost, L1 emptied')
    const live = capture.next('invalidation channels live')
    for (const address of nodes().map((n) => `${n.host}:${n.port}`)) {
      await node(address).client('KILL', 'TYPE', 'pubsub')
    }
    await lost
    expect(agent.stats()).toMatchObject({ l1Entries: 0, invalidationChannelUp: false })
    for (const key of keys) await plain.set(key, `${key}=3`)
    for (const key of keys) expect(await agent.get(key)).toBe(`${key}=3`)
    await live
    await waitFor(() => agent.stats().l1Entries === keys.length, 'L1 refilled')
    for (const key of keys) expect(await agent.get(key)).toBe(`${key}=3`)
  })

  it('coalesces getOrLoad across agents for keys on every master, and a set breaks the lease there', async () => {
    const namespace = testNamespace()
    // The clock stands still: a waiting agent learns of the fill only from the announcement, which rides on
    // the subscriber of the first master and reaches it from whichever master ran the fill.
    const clock = new ManualClock(1_700_000_000_000)
    const start = async (agentId: string) => {
      const agent = createAgent({
        redis: await cluster(),
        namespace,
        agentId,
        clock,
        stampede: { leaseMs: 60_000 },
      })
      agents.push(agent)
      await agent.ready()
      return agent
    }
    const both = [await start('a'), await start('b')]
    const [a, b] = both as [Agent, Agent]
    const plain = await cluster()
    const leaseWaits = () => a.stats().stampede.leaseWaits + b.stats().stampede.leaseWaits
    const options = { ttlSeconds: 60 }

    for (const key of keysOnEveryMaster(plain, namespace, 'loaded')) {
      const loader = controlledLoader<string>()
      const waits = leaseWaits()
      const calls = both.flatMap((agent) =>
        Array.from({ length: 100 }, () => agent.getOrLoad(key, loader, options)),
      )
      await waitFor(
        () => loader.calls === 1 && leaseWaits() === waits + 1,
        `one load of ${key}, one agent waiting`,
      )
      loader.call(0).resolve(key)
      expect(new Set(await Promise.all(calls))).toEqual(new Set([key]))
      expect(loader.calls).toBe(1)
    }

    for (const key of keysOnEveryMaster(plain, namespace, 'written')) {
      const loader = controlledLoader<string>()
      const inFlight = a.getOrLoad(key, loader, options)
      await waitFor(() => loader.calls === 1, `the load of ${key}`)
      expect(await b.set(key, JSON.stringify('written'))).toBe('OK')
      loader.call(0).resolve('read before the write')
      expect(await inFlight).toBe('read before the write')
      expect(await plain.get(key)).toBe('"written"')
      expect(await a.getOrLoad(key, loader, options)).toBe('written')
    }
  })
})
