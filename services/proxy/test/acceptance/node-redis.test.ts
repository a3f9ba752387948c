import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { describe, expect, it } from 'vitest'
import { startProxy, usePrivateRedis, waitFor } from '../support/proxy-fixture.js'

const direct = usePrivateRedis()
const behind = usePrivateRedis()

// What a service on node-redis (`redis` on npm) does: strings, hashes, lists, sets, sorted sets, a pipeline
// (multi without exec's atomicity), a transaction, and pub/sub on a duplicated connection.
async function session(url: string, RESP: 2 | 3 = 2): Promise<unknown> {
  const client = createClient({ url, RESP })
  client.on('error', () => {})
  await client.connect()
  const subscriber = client.duplicate()
  subscriber.on('error', () => {})
  await subscriber.connect()
  try {
    const out: Record<string, unknown> = {}
    out.ping = await client.ping()
    out.set = await client.set('nr:s', 'hello', { EX: 100 })
    out.get = await client.get('nr:s')
    out.incr = [await client.incr('nr:n'), await client.incrBy('nr:n', 5)]
    out.hash = [await client.hSet('nr:h', { a: '1', b: '2' }), await client.hGetAll('nr:h')]
    out.list = [await client.rPush('nr:l', ['x', 'y']), await client.lRange('nr:l', 0, -1)]
    out.set_type = [await client.sAdd('nr:set', ['a', 'b']), (await client.sMembers('nr:set')).sort()]
    out.zset = [
      await client.zAdd('nr:z', [
        { score: 2, value: 'two' },
        { score: 1, value: 'one' },
      ]),
      await client.zRange('nr:z', 0, -1),
    ]
    out.mget = await client.mGet(['nr:s', 'nr:missing'])
    out.pipeline = await client.multi().set('nr:p', '1').incr('nr:p').get('nr:p').execAsPipeline()
    out.transaction = await client.multi().incr('nr:t').incr('nr:t').exec()
    const received = new Promise<string>((resolve) => {
      void subscriber.subscribe('nr:channel', (message) => resolve(message))
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    out.publish = await client.publish('nr:channel', 'hi')
    out.message = await received
    try {
      await client.lPush('nr:s', 'x')
    } catch (error) {
      out.wrongtype = (error as Error).message
    }
    return out
  } finally {
    await subscriber.quit().catch(() => {})
    await client.quit().catch(() => {})
  }
}

describe('node-redis through the proxy', () => {
  it('gives the same results as against Redis directly', async () => {
    const { port } = await startProxy(behind().url)
    const expected = await session(direct().url)
    const through = await session(`redis://127.0.0.1:${port}`)
    expect(through).toEqual(expected)
    expect((expected as { message: string }).message).toBe('hi')
  })

  it('gives the same results over RESP3 (HELLO 3: maps, sets, doubles), also with its keys served from L1', async () => {
    const { port, proxy, namespace } = await startProxy(behind().url)
    const admin = new Redis(behind().url)
    const directAdmin = new Redis(direct().url)
    // The first test's keys are still there.
    await Promise.all([admin.flushall(), directAdmin.flushall()])
    directAdmin.disconnect()
    const expected = await session(direct().url, 3)
    expect(await session(`redis://127.0.0.1:${port}`, 3)).toEqual(expected)
    const keys = ['nr:s', 'nr:h', 'nr:l', 'nr:set', 'nr:z', 'nr:missing'].map((key) => ({ key }))
    await publishRegistry(admin, createNames(namespace), ...keys)
    await waitFor(() => proxy.agent.mitigation('nr:z') === 'local_cache', 'the promotion')
    // From scratch again, now with every read of those keys through L1 (filled, then served).
    await admin.flushall()
    admin.disconnect()
    const before = proxy.agent.stats()
    expect(await session(`redis://127.0.0.1:${port}`, 3)).toEqual(expected)
    const after = proxy.agent.stats()
    expect(after.l1Misses - before.l1Misses).toBeGreaterThan(5)
  })
})
