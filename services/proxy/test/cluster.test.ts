import { publishRegistry } from '@heatsink/agent/testing'
import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { Cluster, Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { calculateSlot } from '../src/cluster/key-slot.js'
import { runDefaultBenchmark } from './support/default-benchmark.js'
import { commandCalls, startProxy, waitFor } from './support/proxy-fixture.js'

let servers: RedisCluster | undefined
const admins: Array<Redis | Cluster> = []

beforeAll(async () => {
  servers = await startRedisCluster({ masters: 3 })
}, 60_000)

afterAll(async () => {
  for (const admin of admins) admin.disconnect()
  await servers?.stop()
})

function seed(): string {
  const first = servers?.nodes[0]
  if (first === undefined) throw new Error('no cluster')
  return `redis://${first.host}:${first.port}`
}

function node(address: string): Redis {
  const [host, port] = address.split(':')
  const client = new Redis({ host, port: Number(port) })
  admins.push(client)
  return client
}

async function direct(): Promise<Cluster> {
  const client = new Cluster(servers?.nodes ?? [])
  admins.push(client)
  await new Promise((resolve) => client.once('ready', resolve))
  return client
}

/** Keys named `<prefix><n>` whose slots are on every master, one per master. */
function keysOnEveryMaster(client: Cluster, prefix: string): string[] {
  const byOwner = new Map<string, string>()
  for (let n = 0; byOwner.size < 3; n++) {
    const key = `${prefix}${n}`
    const owner = client.slots[calculateSlot(key)]?.[0] as string
    if (!byOwner.has(owner)) byOwner.set(owner, key)
  }
  return [...byOwner.values()]
}

describe('the proxy in front of a Redis Cluster, behind one address', () => {
  it('answers keyless commands about the whole keyspace from every master: DBSIZE, KEYS, SCAN, SCRIPT LOAD, RANDOMKEY, FLUSHALL', async () => {
    const { client, namespace } = await startProxy(seed(), { cluster: true })
    const c = client()
    const all = await direct()
    const keys = Array.from({ length: 60 }, (_, i) => `${namespace}:every-${i}`)
    for (const key of keys) await c.set(key, 'v')
    const perMaster = await Promise.all(all.nodes('master').map((master) => master.dbsize()))
    expect(new Set(perMaster.map((size) => size > 0)).size).toBe(1)
    expect(await c.dbsize()).toBe(perMaster.reduce((sum, size) => sum + size, 0))
    expect((await c.keys(`${namespace}:every-*`)).sort()).toEqual([...keys].sort())
    const scanned: string[] = []
    let cursor = '0'
    let rounds = 0
    do {
      const [next, batch] = await c.scan(cursor, 'MATCH', `${namespace}:every-*`, 'COUNT', 7)
      scanned.push(...batch)
      cursor = next
      rounds++
    } while (cursor !== '0' && rounds < 1000)
    expect(new Set(scanned)).toEqual(new Set(keys))
    await expect(c.scan('not-a-cursor')).rejects.toThrow('ERR invalid cursor')
    // A script loaded through the proxy runs by its digest on whichever master a key names.
    const sha = (await c.script('LOAD', "return redis.call('GET', KEYS[1])")) as string
    for (const key of keysOnEveryMaster(all, `${namespace}:every-`))
      expect(await c.evalsha(sha, 1, key)).toBe('v')
    expect(await c.script('EXISTS', sha, 'f'.repeat(40))).toEqual([1, 0])
    expect(await c.randomkey()).not.toBeNull()
    expect(await c.flushall()).toBe('OK')
    expect(await c.keys(`${namespace}:every-*`)).toEqual([])
  })

  it("subscribes SSUBSCRIBE on the master of the channel's shard, where SPUBLISH delivers", async () => {
    const { client, namespace } = await startProxy(seed(), { cluster: true })
    const all = await direct()
    const channels = keysOnEveryMaster(all, `${namespace}:shard-`)
    for (const channel of channels) {
      const subscriber = client()
      const received = new Promise<string>((resolve) =>
        subscriber.on('smessage', (_, message) => resolve(message)),
      )
      await subscriber.ssubscribe(channel)
      expect(await client().spublish(channel, `to ${channel}`)).toBe(1)
      expect(await received).toBe(`to ${channel}`)
    }
  })

  it('serves a RESP3 client (node-redis, RESP: 3) on every master, MGET across slots merged in RESP3', async () => {
    const { port, namespace } = await startProxy(seed(), { cluster: true })
    const keys = keysOnEveryMaster(await direct(), `${namespace}:r3-`)
    const client = createClient({ url: `redis://127.0.0.1:${port}`, RESP: 3 })
    client.on('error', () => {})
    await client.connect()
    try {
      for (const key of keys) {
        expect(await client.hSet(key, { field: key })).toBe(1)
        expect(await client.hGetAll(key)).toEqual({ field: key })
        expect(await client.zAdd(`{${key}}z`, { score: 1.5, value: 'm' })).toBe(1)
        expect(await client.zScore(`{${key}}z`, 'm')).toBe(1.5)
      }
      await client.set(keys[0] as string, 'a')
      expect(
        await client.sendCommand(['MGET', keys[0] as string, `${namespace}:nokey`, ...keys.slice(1)]),
      ).toEqual(['a', null, null, null])
    } finally {
      await client.quit().catch(() => {})
    }
  })

  it('routes each key to its master, and splits MGET, MSET, DEL and EXISTS across slots, merging the replies', async () => {
    const { client, namespace } = await startProxy(seed(), { cluster: true })
    const c = client()
    const all = await direct()
    const keys = keysOnEveryMaster(all, `${namespace}:k`)
    for (const key of keys) expect(await c.set(key, `v-${key}`)).toBe('OK')
    for (const key of keys) expect(await all.get(key)).toBe(`v-${key}`)
    expect(await c.mget(...keys, `${namespace}:missing`)).toEqual([...keys.map((key) => `v-${key}`), null])
    expect(await c.mset(Object.fromEntries(keys.map((key) => [key, 'm'])))).toBe('OK')
    expect(await c.mget(...keys)).toEqual(keys.map(() => 'm'))
    expect(await c.exists(...keys, `${namespace}:missing`)).toBe(3)
    expect(await c.del(...keys)).toBe(3)
    expect(await c.exists(...keys)).toBe(0)
  })

  it("answers other commands across slots with Redis' CROSSSLOT error, and runs them within one slot", async () => {
    const { client, namespace } = await startProxy(seed(), { cluster: true })
    const c = client()
    const keys = keysOnEveryMaster(await direct(), `${namespace}:s`)
    await expect(c.sunion(...keys)).rejects.toThrow("CROSSSLOT Keys in request don't hash to the same slot")
    await c.sadd(`{${namespace}}:a`, 'x')
    await c.sadd(`{${namespace}}:b`, 'y')
    expect((await c.sunion(`{${namespace}}:a`, `{${namespace}}:b`)).sort()).toEqual(['x', 'y'])
    // MULTI names no key: the transaction goes to the master of its first command's key, whichever it is.
    for (const key of keys) {
      expect(await c.multi().incr(key).incr(key).exec()).toEqual([
        [null, 1],
        [null, 2],
      ])
    }
    expect(await c.multi().exec()).toEqual([])
  })

  it('returns a client to every master once its blocking command is answered: no MOVED on the next keys', async () => {
    const { client, namespace } = await startProxy(seed(), { cluster: true })
    const c = client()
    const keys = keysOnEveryMaster(await direct(), `${namespace}:b`)
    for (const key of keys) expect(await c.set(key, 'v')).toBe('OK')
    for (const master of keys) {
      // An empty list in that master's slot: the command blocks for its timeout, then answers nil.
      const empty = `{${master}}:empty`
      expect(await c.blpop(empty, 0.01)).toBeNull()
      for (const key of keys) expect(await c.get(key)).toBe('v')
      // Pipelined behind the blocking command: each still goes to its own key's master.
      const pipeline = c.pipeline().bzpopmin(empty, 0.01)
      for (const key of keys) pipeline.get(key)
      expect(await pipeline.exec()).toEqual([[null, null], ...keys.map(() => [null, 'v'])])
    }
  })

  // Before the migration test, which changes the cluster's slot map for the tests after it.
  it('serves a local_cache key from L1 without reaching its master', async () => {
    const { client, namespace, proxy } = await startProxy(seed(), { cluster: true })
    const all = await direct()
    const key = `${namespace}:hot`
    await all.set(key, 'value')
    await publishRegistry(all, createNames(namespace), { key })
    await waitFor(() => proxy.agent.mitigation(key) === 'local_cache', 'the promotion')
    const c = client()
    expect(await c.get(key)).toBe('value')
    const master = node(all.slots[calculateSlot(key)]?.[0] as string)
    const before = await commandCalls(master, 'get')
    // The first read may itself have been served: promotion prefills the key's GET reply.
    const servedBefore = proxy.stats.served
    for (let i = 0; i < 500; i++) expect(await c.get(key)).toBe('value')
    expect(proxy.stats.served - servedBefore).toBe(500)
    expect(await commandCalls(master, 'get')).toBe(before)
  })

  it('follows ASK while a slot migrates and MOVED once it has moved: the client sees only the value', async () => {
    const { client, namespace } = await startProxy(seed(), { cluster: true })
    const c = client()
    const all = await direct()
    const key = `${namespace}:moving`
    await c.set(key, 'before')
    const slot = calculateSlot(key)
    const from = all.slots[slot]?.[0] as string
    const to = all.slots.find((owners) => owners[0] !== from)?.[0] as string
    const source = node(from)
    const target = node(to)
    const sourceId = await source.cluster('MYID')
    const targetId = await target.cluster('MYID')
    const [toHost, toPort] = to.split(':') as [string, string]
    await target.cluster('SETSLOT', slot, 'IMPORTING', sourceId)
    await source.cluster('SETSLOT', slot, 'MIGRATING', targetId)
    await source.migrate(toHost, toPort, '', 0, 5000, 'KEYS', key)
    // Migrating: the old master answers ASK for the key it no longer holds.
    expect(await c.get(key)).toBe('before')
    for (const address of (servers?.nodes ?? []).map((n) => `${n.host}:${n.port}`)) {
      await node(address).cluster('SETSLOT', slot, 'NODE', targetId)
    }
    // Moved: the old master answers MOVED until the proxy's slot table is refreshed.
    expect(await c.get(key)).toBe('before')
    expect(await c.set(key, 'after')).toBe('OK')
    expect(await target.get(key)).toBe('after')
  })

  it.each([[[]], [['-P', '16']]])(
    'completes every redis-benchmark default test with no error (%j)',
    async (extra) => {
      const { port } = await startProxy(seed(), { cluster: true })
      expect(await runDefaultBenchmark(port, extra)).toHaveLength(20)
    },
  )
})
