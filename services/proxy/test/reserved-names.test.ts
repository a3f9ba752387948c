import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { encodeRequest } from '../src/resp/request-parser.js'
import { readUntil, scanAll, usePrivateRedis, waitFor } from './support/proxy-fixture.js'
import { type ProxyProcess, startProxyProcess } from './support/proxy-process.js'

// Every test asserts what a client of the proxy process sees: Heatsink's own keys and channels are refused or left
// out, the application's keys (its own under the namespace too) are untouched.
const redis = usePrivateRedis()

let proxy: ProxyProcess
let admin: Redis
let client: Redis
const sockets: Socket[] = []

beforeAll(async () => {
  // Short windows, so that the proxy's agent has written its report stream soon.
  proxy = await startProxyProcess(redis().url, { HEATSINK_WINDOW_MS: '200' })
  admin = new Redis(redis().url)
  client = new Redis({ port: proxy.port, maxRetriesPerRequest: 0 })
  client.on('error', () => {})
  await publishRegistry(admin, createNames(proxy.namespace), { key: 'product:1' })
  await waitFor(async () => (await heatsinkKeys()).length >= 2, 'a report stream beside the snapshot', 10_000)
}, 30_000)

afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy()
})

afterAll(() => {
  client.disconnect()
  admin.disconnect()
})

// What Redis itself lists of Heatsink's keys: the registry snapshot and the report streams.
async function heatsinkKeys(): Promise<string[]> {
  const ns = proxy.namespace
  return (await admin.keys(`${ns}:*`)).filter((key) => key.startsWith(`${ns}:re`))
}

function refusedKey(name: string): string {
  return `ERR '${name}' is reserved for Heatsink's own state (namespace '${proxy.namespace}')`
}

async function rawSocket(): Promise<Socket> {
  const socket = connect({ port: proxy.port, host: '127.0.0.1' })
  socket.on('error', () => {})
  sockets.push(socket)
  await once(socket, 'connect')
  return socket
}

// Sends `argv` and reads until the bytes received end with `until`.
async function exchange(socket: Socket, argv: string[], until: string): Promise<string> {
  const reply = readUntil(socket, (bytes) => bytes.toString('latin1').includes(until))
  socket.write(encodeRequest(argv))
  return (await reply).toString('latin1')
}

describe("a client of the proxy and Heatsink's own keys", () => {
  it('is refused reads, writes and deletes of them, with the name and the reason, and Redis keeps them', async () => {
    const snapshot = `${proxy.namespace}:registry:snapshot`
    await expect(client.hget(snapshot, 'version')).rejects.toThrow(refusedKey(snapshot))
    await expect(client.del(snapshot)).rejects.toThrow(refusedKey(snapshot))
    await expect(client.set(`${proxy.namespace}:split:{a}:2:0:d:k`, '1')).rejects.toThrow(
      refusedKey(`${proxy.namespace}:split:{a}:2:0:d:k`),
    )
    await expect(client.unlink('other', `${proxy.namespace}:reports:0`)).rejects.toThrow(
      refusedKey(`${proxy.namespace}:reports:0`),
    )
    await expect(client.xrange(`${proxy.namespace}:reports:0`, '-', '+')).rejects.toThrow('is reserved')
    await expect(client.rename('mine', `${proxy.namespace}:agents`)).rejects.toThrow('is reserved')
    expect(await admin.exists(snapshot)).toBe(1)

    // The application's own keys under the namespace are its own.
    expect(await client.set(`${proxy.namespace}:user:1`, 'ada')).toBe('OK')
    expect(await client.get(`${proxy.namespace}:user:1`)).toBe('ada')
  })

  it('makes EXEC abort a transaction that named one, as Redis does for a command refused while queuing', async () => {
    const socket = await rawSocket()
    const replies = await exchange(socket, ['MULTI'], '+OK\r\n')
    expect(replies).toBe('+OK\r\n')
    expect(await exchange(socket, ['SET', 'mine', '1'], '\r\n')).toBe('+QUEUED\r\n')
    expect(await exchange(socket, ['DEL', `${proxy.namespace}:agents`], '\r\n')).toBe(
      `-${refusedKey(`${proxy.namespace}:agents`)}\r\n`,
    )
    expect(await exchange(socket, ['EXEC'], '\r\n')).toBe(
      '-EXECABORT Transaction discarded because of previous errors.\r\n',
    )
    expect(await admin.exists('mine')).toBe(0)
  })

  it('is refused scripts that declare them or spell them, and SORT patterns that read them', async () => {
    const snapshot = `${proxy.namespace}:registry:snapshot`
    await expect(client.eval("return redis.call('hgetall', KEYS[1])", 1, snapshot)).rejects.toThrow(
      refusedKey(snapshot),
    )
    await expect(client.eval(`return redis.call('del', '${snapshot}')`, 0)).rejects.toThrow(
      `ERR scripts that name Heatsink's own keys or channels ('${proxy.namespace}:...') are refused`,
    )
    await expect(
      client.script('LOAD', `return redis.call('publish', '${proxy.namespace}:registry', 'x')`),
    ).rejects.toThrow('are refused')
    const sha = (await admin.script('LOAD', "return redis.call('type', KEYS[1])")) as string
    await expect(client.evalsha(sha, 1, snapshot)).rejects.toThrow(refusedKey(snapshot))
    await admin.function(
      'LOAD',
      "#!lua name=lib\nredis.register_function('kind', function(keys) return redis.call('type', keys[1])['ok'] end)",
    )
    await expect(client.call('FCALL', 'kind', 1, snapshot)).rejects.toThrow(refusedKey(snapshot))
    await expect(
      client.call(
        'FUNCTION',
        'LOAD',
        `#!lua name=bad\nredis.register_function('wipe', function() return redis.call('del', '${proxy.namespace}:agents') end)`,
      ),
    ).rejects.toThrow('are refused')
    await expect(client.sort('mine', 'BY', `${proxy.namespace}:stats:*`)).rejects.toThrow(
      `ERR pattern '${proxy.namespace}:stats:*' is reserved`,
    )
    expect(await admin.exists(snapshot)).toBe(1)

    // Scripts about the application's keys, its own under the namespace too, run.
    expect(await client.eval(`return redis.call('set', '${proxy.namespace}:user:2', 'x')`, 0)).toBe('OK')
    expect(await client.call('FCALL', 'kind', 1, `${proxy.namespace}:user:2`)).toBe('string')
  })

  it('gets KEYS, SCAN and PUBSUB CHANNELS without them', async () => {
    await client.set('app:1', 'a')
    await client.set(`${proxy.namespace}:user:keys`, 'b')
    const hidden = await heatsinkKeys()
    expect(hidden).toContain(`${proxy.namespace}:registry:snapshot`)
    const listed = await client.keys('*')
    expect(listed).toEqual(expect.arrayContaining(['app:1', `${proxy.namespace}:user:keys`]))
    expect(listed.filter((key) => hidden.includes(key))).toEqual([])
    expect(await client.keys(`${proxy.namespace}:re*`)).toEqual([])

    const scanned = await scanAll(client, 2)
    expect(scanned.sort()).toEqual(listed.sort())

    const listener = new Redis(redis().url)
    try {
      await listener.subscribe('app-channel')
      expect((await admin.pubsub('CHANNELS')).includes(`${proxy.namespace}:registry`)).toBe(true)
      // Redis's own tracking channel stays listed: the proxy's L1 needs it (docs/operations.md).
      expect((await client.pubsub('CHANNELS')).sort()).toEqual(['__redis__:invalidate', 'app-channel'])
    } finally {
      listener.disconnect()
    }
  })

  it('gets KEYS and SCAN inside MULTI without them, every other reply of the transaction Redis’s own, in RESP2 and RESP3', async () => {
    await client.set('app:2', 'c')
    const hidden = await heatsinkKeys()
    expect(hidden.length).toBeGreaterThan(0)
    const pipeline = await client.multi().keys('*').scan(0, 'COUNT', 1000).get('app:2').keys('app:2').exec()
    const [keys, scan, value, one] = (pipeline ?? []).map(([error, reply]) => {
      expect(error).toBeNull()
      return reply
    })
    expect(keys).toEqual(await client.keys('*'))
    expect((keys as string[]).filter((key) => hidden.includes(key))).toEqual([])
    expect((scan as [string, string[]])[1].filter((key) => hidden.includes(key))).toEqual([])
    expect((scan as [string, string[]])[1]).toContain('app:2')
    expect(value).toBe('c')
    expect(one).toEqual(['app:2'])

    // RESP3: a map in the same transaction is relayed as Redis sent it.
    await client.hset('app:h', 'f', 'v')
    const socket = await rawSocket()
    await exchange(socket, ['HELLO', '3'], 'modules')
    await exchange(socket, ['MULTI'], '+OK\r\n')
    await exchange(socket, ['KEYS', '*'], 'QUEUED')
    await exchange(socket, ['HGETALL', 'app:h'], 'QUEUED')
    const exec = await exchange(socket, ['EXEC'], '$1\r\nv\r\n')
    expect(exec).toContain('%1\r\n$1\r\nf\r\n$1\r\nv\r\n')
    for (const key of hidden) expect(exec).not.toContain(key)
    expect(exec).toContain('app:h')
  })

  it('is refused PUBLISH, SPUBLISH and SUBSCRIBE on their channels, and PSUBSCRIBE * never delivers their messages', async () => {
    const registry = `${proxy.namespace}:registry`
    await expect(client.publish(registry, 'forged')).rejects.toThrow(`ERR channel '${registry}' is reserved`)
    await expect(client.call('SPUBLISH', `${proxy.namespace}:invalidate`, 'x')).rejects.toThrow('is reserved')

    for (const hello of [[], ['HELLO', '3']]) {
      const socket = await rawSocket()
      if (hello.length > 0) await exchange(socket, hello, 'proto')
      const subscribed = await exchange(socket, ['SUBSCRIBE', `${proxy.namespace}:invalidate`], '\r\n')
      expect(subscribed).toBe(
        `-ERR channel '${proxy.namespace}:invalidate' is reserved for Heatsink's own state (namespace '${proxy.namespace}')\r\n`,
      )
      const pattern = await exchange(socket, ['PSUBSCRIBE', '*'], ':1\r\n')
      expect(pattern).toContain('psubscribe')
      // Subscribed now: a SUBSCRIBE on the subscribed connection is refused too.
      expect(await exchange(socket, ['SUBSCRIBE', registry], '\r\n')).toContain(
        `channel '${registry}' is reserved`,
      )

      const received = readUntil(socket, (bytes) => bytes.toString('latin1').includes('after'))
      await publishRegistry(admin, createNames(proxy.namespace), { key: 'product:2' })
      await admin.publish(`${proxy.namespace}:invalidate`, 'x')
      await admin.publish('app-channel', 'after')
      const text = (await received).toString('latin1')
      expect(text).not.toContain(proxy.namespace)
      expect(text).toContain('app-channel')
    }
  })
})
