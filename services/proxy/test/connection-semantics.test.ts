import { once } from 'node:events'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { expectReply, readUntil, startProxy, usePrivateRedis, waitFor } from './support/proxy-fixture.js'

const redis = usePrivateRedis()

describe('connection state through the proxy', () => {
  it('runs MULTI/EXEC on one backend connection, and WATCH aborts on a concurrent write', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const a = client()
    const b = client()
    const key = `${namespace}:tx`
    expect(await a.multi().set(key, '1').incr(key).get(key).exec()).toEqual([
      [null, 'OK'],
      [null, 2],
      [null, '2'],
    ])
    await a.watch(key)
    await b.set(key, 'changed')
    expect(await a.multi().set(key, 'mine').exec()).toBeNull()
    expect(await b.get(key)).toBe('changed')
  })

  it('keeps SELECT per client: another database through the proxy, and clients left on theirs', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const a = client()
    const b = client()
    const key = `${namespace}:db`
    await a.select(3)
    await a.set(key, 'in 3')
    await b.set(key, 'in 0')
    expect(await a.get(key)).toBe('in 3')
    expect(await b.get(key)).toBe('in 0')
    const direct = new Redis(redis().url, { db: 3 })
    expect(await direct.get(key)).toBe('in 3')
    direct.disconnect()
  })

  it('delivers pub/sub messages to a subscribed client', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const subscriber = client()
    const publisher = client()
    const channel = `${namespace}:ch`
    await subscriber.subscribe(channel)
    const message = once(subscriber, 'message')
    expect(await publisher.publish(channel, 'hello')).toBe(1)
    expect(await message).toEqual([channel, 'hello'])
    await subscriber.unsubscribe(channel)
    expect(await subscriber.ping()).toBe('PONG')
  })

  it('runs a blocking BLPOP on its own connection while other clients carry on', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const blocked = client()
    const other = client()
    const list = `${namespace}:q`
    const popped = blocked.blpop(list, 5)
    // Other clients are not held up behind the blocked one.
    for (let i = 0; i < 20; i++) expect(await other.ping()).toBe('PONG')
    await other.rpush(list, 'job')
    expect(await popped).toEqual([list, 'job'])
  })

  it('answers CLIENT SETNAME/GETNAME/ID itself, and ECHO and PING as Redis does', async () => {
    const { client } = await startProxy(redis().url)
    const c = client()
    expect(await c.client('GETNAME')).toBeNull()
    expect(await c.client('SETNAME', 'worker-1')).toBe('OK')
    expect(await c.client('GETNAME')).toBe('worker-1')
    await expect(c.client('SETNAME', 'two words')).rejects.toThrow(/cannot contain spaces/)
    expect(typeof (await c.client('ID'))).toBe('number')
    expect(await c.echo('x\r\ny')).toBe('x\r\ny')
    expect(await c.ping('hi')).toBe('hi')
  })

  it('refuses MONITOR and CLIENT TRACKING with a clear error instead of a hang', async () => {
    const { client } = await startProxy(redis().url)
    const c = client()
    await expect(c.call('MONITOR')).rejects.toThrow(/MONITOR is not supported through the proxy/)
    await expect(c.call('CLIENT', 'TRACKING', 'ON')).rejects.toThrow(/CLIENT TRACKING is not supported/)
    expect(await c.ping()).toBe('PONG')
  })

  it('answers QUIT with OK after the replies before it, then closes', async () => {
    const { socket } = await startProxy(redis().url)
    const s = await socket()
    s.write('PING\r\nQUIT\r\nPING\r\n')
    expect((await readUntil(s, () => false)).toString()).toBe('+PONG\r\n+OK\r\n')
  })

  it('RESET leaves MULTI, the database and the name, and answers RESET', async () => {
    const { socket, namespace } = await startProxy(redis().url)
    const s = await socket()
    s.write(
      `SELECT 2\r\nCLIENT SETNAME n\r\nMULTI\r\nSET ${namespace}:x 1\r\nRESET\r\nCLIENT GETNAME\r\nEXEC\r\n`,
    )
    const expected = '+OK\r\n+OK\r\n+OK\r\n+QUEUED\r\n+RESET\r\n$-1\r\n-ERR EXEC without MULTI\r\n'
    expect(await expectReply(s, expected)).toBe(expected)
    const direct = new Redis(redis().url, { db: 2 })
    expect(await direct.exists(`${namespace}:x`)).toBe(0)
    direct.disconnect()
  })

  it('HELLO 2 answers as Redis; HELLO 3 switches the client to RESP3 and back', async () => {
    const { socket } = await startProxy(redis().url)
    const s = await socket()
    s.write('HELLO 2\r\n')
    expect((await readUntil(s, (b) => b.includes('modules'))).toString()).toMatch(
      /^\*14\r\n\$6\r\nserver\r\n/,
    )
    s.write('HELLO 3\r\n')
    expect((await readUntil(s, (b) => b.includes('modules'))).toString()).toMatch(/^%7\r\n/)
    s.write('HGETALL nokey\r\n')
    // An empty map, RESP3's answer.
    expect(await expectReply(s, '%0\r\n')).toBe('%0\r\n')
    s.write('HELLO 4\r\n')
    expect(await expectReply(s, '-NOPROTO unsupported protocol version\r\n')).toBe(
      '-NOPROTO unsupported protocol version\r\n',
    )
  })
})

describe('the proxy’s own passwords and limits', () => {
  it('asks for AUTH (or HELLO AUTH) before anything else, with users kept apart from the backend', async () => {
    const passwords = new Map([
      ['default', 'secret'],
      ['app', 'app-pass'],
    ])
    const { port } = await startProxy(redis().url, { passwords })
    // No ready check: its INFO would meet NOAUTH and end the connection, as against Redis with requirepass.
    const none = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, enableReadyCheck: false })
    await none.connect()
    await expect(none.get('k')).rejects.toThrow(/^NOAUTH Authentication required/)
    await expect(none.auth('wrong')).rejects.toThrow(/^WRONGPASS/)
    expect(await none.auth('secret')).toBe('OK')
    expect(await none.ping()).toBe('PONG')
    none.disconnect()
    const app = new Redis({ port, username: 'app', password: 'app-pass' })
    expect(await app.ping()).toBe('PONG')
    app.disconnect()
    const hello = new Redis({ port, lazyConnect: true, enableReadyCheck: false })
    await hello.connect()
    const reply = (await hello.call('HELLO', '2', 'AUTH', 'app', 'app-pass')) as unknown[]
    expect(reply[0]).toBe('server')
    expect(await hello.ping()).toBe('PONG')
    hello.disconnect()
  })

  it('refuses clients beyond the connection limit with Redis’ error', async () => {
    const { socket } = await startProxy(redis().url, { maxClients: 2 })
    await socket()
    await socket()
    const third = await socket()
    expect((await readUntil(third, () => false)).toString()).toBe('-ERR max number of clients reached\r\n')
  })

  it('disconnects a client that does not read its replies past the output limit, and no other', async () => {
    const { proxy, socket, client, namespace } = await startProxy(redis().url, {
      clientOutputLimitBytes: 1024 * 1024,
    })
    const writer = client()
    await writer.set(`${namespace}:v`, 'x'.repeat(100_000))
    const slow = await socket()
    slow.pause()
    // 200 replies of 100 KB that the client never reads: more than the socket buffers hold.
    slow.write(`GET ${namespace}:v\r\n`.repeat(200))
    await waitFor(() => proxy.stats.outputOverflows === 1, 'the slow client to be cut off')
    expect(proxy.clients).toBe(1)
    expect(await writer.ping()).toBe('PONG')
  })
})
