import { createClient } from 'redis'
import { describe, expect, it } from 'vitest'
import { startProxy, usePrivateRedis } from '../support/proxy-fixture.js'

const direct = usePrivateRedis()
const behind = usePrivateRedis()

// What a service on node-redis (`redis` on npm) does: strings, hashes, lists, sets, sorted sets, a pipeline
// (multi without exec's atomicity), a transaction, and pub/sub on a duplicated connection.
async function session(url: string): Promise<unknown> {
  const client = createClient({ url })
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
})
