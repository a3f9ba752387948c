import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { createNames, redisClusterSlot } from '@heatsink/protocol'
import { type Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { testNamespace } from '../../../test/support/namespace.js'
import { createSplitter, type Splitter } from '../src/index.js'
import { connectCluster } from './support/cluster.js'

let servers: RedisCluster
const clients: Array<Redis | Cluster> = []

beforeAll(async () => {
  servers = await startRedisCluster({ masters: 3 })
}, 60_000)

afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect()
})

afterAll(async () => {
  await servers?.stop()
})

function cluster(): Promise<Cluster> {
  return connectCluster(servers.nodes, clients)
}

function node(address: string): Redis {
  const [host, port] = address.split(':')
  const client = new Redis({ host: host!, port: Number(port) })
  clients.push(client)
  return client
}

// Scripts a master has run (the splitter writes only through scripts), from INFO commandstats.
async function scriptCalls(client: Redis): Promise<number> {
  const info = await client.info('commandstats')
  let calls = 0
  for (const match of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(match[1])
  return calls
}

describe('split keys on a Redis Cluster of three masters', () => {
  it('places the 8 shards of any key on all three masters, 3, 3 and 2', async () => {
    const client = await cluster()
    const splitter = createSplitter({ redis: client, names: createNames(testNamespace()), agentId: 'a' })
    for (let k = 0; k < 500; k++) {
      const perMaster = new Map<string, number>()
      for (const { node } of splitter.placement(`product:${k}:views`, 8))
        perMaster.set(node, (perMaster.get(node) ?? 0) + 1)
      expect([...perMaster.values()].sort()).toEqual([2, 3, 3])
    }
    for (let k = 0; k < 500; k++) {
      const masters = new Set(splitter.placement(`user:{${k}}:likes`, 2).map((shard) => shard.node))
      expect(masters.size).toBe(2)
    }
  })

  it('spreads a hot counter: no master takes more than 1/3 + 10% of its writes (unsplit, one master takes all)', async () => {
    const namespace = testNamespace()
    const names = createNames(namespace)
    const key = `${namespace}:hot`
    const agents: Splitter[] = []
    for (const id of ['a', 'b', 'c', 'd'])
      agents.push(createSplitter({ redis: await cluster(), names, agentId: id }))
    const masters = servers.nodes.map((n) => node(`${n.host}:${n.port}`))
    const measure = async (n: number, writes: number) => {
      const before = await Promise.all(masters.map(scriptCalls))
      await Promise.all(
        agents.map(async (splitter) => {
          const worker = async () => {
            for (let i = 0; i < writes / 4 / 50; i++) await splitter.add(key, n, 1)
          }
          await Promise.all(Array.from({ length: 50 }, worker))
        }),
      )
      const after = await Promise.all(masters.map(scriptCalls))
      const deltas = after.map((count, i) => count - before[i]!)
      const total = deltas.reduce((sum, delta) => sum + delta, 0)
      return { total, shares: deltas.map((delta) => delta / total) }
    }
    const split = await measure(8, 40_000)
    expect(split.total).toBe(40_000)
    expect(split.shares.filter((share) => share > 0)).toHaveLength(3)
    for (const share of split.shares) expect(share).toBeLessThanOrEqual(1 / 3 + 0.1)
    expect(await agents[0]!.get(key, 8)).toBe('40000')

    // The same load unsplit: every write on the one master that owns the key's slot.
    const slotOwner = (await cluster()).slots[redisClusterSlot(key)]![0]!
    const ownerClient = node(slotOwner)
    const incrBefore = await ownerClient.info('commandstats')
    await Promise.all(
      agents.map(async (splitter) => {
        for (let i = 0; i < 250; i++) await splitter.add(key, 1, 1)
      }),
    )
    const incrAfter = await ownerClient.info('commandstats')
    const incrCalls = (info: string) => Number(/^cmdstat_incrby:calls=(\d+)/m.exec(info)?.[1] ?? 0)
    expect(incrCalls(incrAfter) - incrCalls(incrBefore)).toBe(1000)
  }, 60_000)

  it('reads a counter whose shard just moved to another master: answered MOVED there, read again through the cluster', async () => {
    const client = await cluster()
    const namespace = testNamespace()
    const splitter = createSplitter({ redis: client, names: createNames(namespace), agentId: 'a' })
    const key = `${namespace}:moving`
    await client.set(key, '100')
    const shards = splitter.layout(key, 8).shards
    for (const shard of shards) await client.set(shard.data, '1')
    expect(await splitter.get(key, 8)).toBe('108')
    const moving = shards[0]!
    const from = client.slots[moving.slot]![0]!
    const to = client.slots.find((owners) => owners[0] !== from)![0]!
    await moveSlot(moving.slot, from, to)
    try {
      // The client has not heard of the move: its map still sends the shard to the old master.
      expect(client.slots[moving.slot]![0]).toBe(from)
      expect(await splitter.get(key, 8)).toBe('108')
      // The cluster client followed the MOVED and learned the new owner.
      expect(client.slots[moving.slot]![0]).toBe(to)
    } finally {
      await moveSlot(moving.slot, to, from)
    }
  })
})

// Moves a slot and its keys between masters the way redis-cli --cluster reshard does.
async function moveSlot(slot: number, from: string, to: string): Promise<void> {
  const source = node(from)
  const target = node(to)
  const [toHost, toPort] = to.split(':') as [string, string]
  await target.cluster('SETSLOT', slot, 'IMPORTING', await source.cluster('MYID'))
  await source.cluster('SETSLOT', slot, 'MIGRATING', await target.cluster('MYID'))
  const keys = (await source.cluster('GETKEYSINSLOT', slot, 1000)) as string[]
  if (keys.length > 0) await source.migrate(toHost, toPort, '', 0, 5000, 'KEYS', ...keys)
  const targetId = await target.cluster('MYID')
  for (const master of servers.nodes)
    await node(`${master.host}:${master.port}`).cluster('SETSLOT', slot, 'NODE', targetId)
}
