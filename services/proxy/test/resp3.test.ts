import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { publishRegistry } from '@heatsink/agent/testing'
import { CACHEABLE_COMMANDS } from '@heatsink/commands'
import { createNames } from '@heatsink/protocol'
import { CACHEABLE_CALLS, CACHEABLE_KEYS, writeCacheableKeys } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { ReplyScanner } from '../src/resp/reply-scanner.js'
import { encodeRequest } from '../src/resp/request-parser.js'
import { commandCalls, startProxy, usePrivateRedis, waitFor } from './support/proxy-fixture.js'

const redis = usePrivateRedis()
const closing: Array<{ destroy(): void } | { disconnect(): void }> = []
afterEach(() => {
  for (const item of closing.splice(0)) 'destroy' in item ? item.destroy() : item.disconnect()
})

interface Pending {
  parts: Buffer[]
  resolve: (reply: Buffer) => void
}

/** A client that sends one request at a time and returns the reply's exact bytes (RESP2 or RESP3). */
class RawClient {
  readonly #socket: Socket
  readonly #scanner = new ReplyScanner()
  #pending: Pending | undefined

  private constructor(socket: Socket) {
    this.#socket = socket
    socket.on('data', (chunk: Buffer) => {
      const pending = this.#pending as Pending
      const end = this.#scanner.scan(chunk, 0)
      pending.parts.push(end === -1 ? chunk : chunk.subarray(0, end))
      if (end === -1) return
      this.#pending = undefined
      pending.resolve(Buffer.concat(pending.parts))
    })
  }

  static async open(port: number): Promise<RawClient> {
    const socket = connect({ port, host: '127.0.0.1' })
    closing.push(socket)
    await once(socket, 'connect')
    return new RawClient(socket)
  }

  call(...args: string[]): Promise<Buffer> {
    return new Promise((resolve) => {
      this.#pending = { parts: [], resolve }
      this.#socket.write(encodeRequest(args))
    })
  }
}

// Reads the core may answer itself (L1 hits and fills, MGET over L1), covering every RESP3 reply shape they take.
const READS: string[][] = [
  ['GET', 's'],
  ['GET', 'missing'],
  ['STRLEN', 's'],
  ['EXISTS', 's'],
  ['TYPE', 's'],
  ['TYPE', 'h'],
  ['HGET', 'h', 'a'],
  ['HGET', 'h', 'nofield'],
  ['HMGET', 'h', 'a', 'nofield'],
  ['HGETALL', 'h'],
  ['HGETALL', 'missing'],
  ['HKEYS', 'h'],
  ['HEXISTS', 'h', 'a'],
  ['SMEMBERS', 'set'],
  ['SISMEMBER', 'set', 'x'],
  ['SCARD', 'set'],
  ['ZSCORE', 'z', 'a'],
  ['ZSCORE', 'z', 'nomember'],
  ['ZMSCORE', 'z', 'a', 'nomember', 'c'],
  ['ZRANGE', 'z', '0', '-1'],
  ['ZRANGE', 'z', '0', '-1', 'WITHSCORES'],
  ['ZRANGEBYSCORE', 'z', '-inf', '+inf', 'withscores'],
  ['ZREVRANGE', 'z', '0', '-1', 'WITHSCORES'],
  ['ZRANK', 'z', 'b'],
  ['LRANGE', 'l', '0', '-1'],
  ['LINDEX', 'l', '99'],
  ['LPOS', 'l', 'y'],
  ['MGET', 's', 'missing'],
]

async function fill(direct: Redis, prefix: string): Promise<void> {
  await direct.set(`${prefix}s`, 'hello')
  await direct.hset(`${prefix}h`, 'a', '1', 'b', '2')
  await direct.sadd(`${prefix}set`, 'x', 'y', 'z')
  await direct.zadd(`${prefix}z`, '1.5', 'a', '2', 'b', '-inf', 'c')
  await direct.rpush(`${prefix}l`, 'x', 'y')
}

describe('RESP3 clients through the proxy', () => {
  it('get from L1 exactly the bytes Redis sends them over RESP3 (and RESP2 clients theirs), never reaching Redis', async () => {
    const { proxy, port, namespace } = await startProxy(redis().url)
    const prefix = `${namespace}:`
    const direct = new Redis(redis().url)
    closing.push(direct)
    await fill(direct, prefix)
    const keys = ['s', 'missing', 'h', 'set', 'z', 'l'].map((k) => ({ key: prefix + k }))
    await publishRegistry(direct, createNames(namespace), ...keys)
    await waitFor(() => proxy.agent.mitigation(`${prefix}s`) === 'local_cache', 'the promotion')

    for (const protocol of ['3', '2']) {
      const viaRedis = await RawClient.open(Number(new URL(redis().url).port))
      const viaProxy = await RawClient.open(port)
      expect((await viaProxy.call('HELLO', protocol))[0]).toBe((await viaRedis.call('HELLO', protocol))[0])
      for (const read of READS) {
        const args = [read[0] as string, ...read.slice(1).map((arg, i) => (i === 0 ? prefix + arg : arg))]
        if (read[0] === 'MGET') args[2] = prefix + read[2]
        const expected = (await viaRedis.call(...args)).toString('latin1')
        // The first read may fill L1; the second is answered from it.
        expect((await viaProxy.call(...args)).toString('latin1'), args.join(' ')).toBe(expected)
        const calls = await commandCalls(direct, (read[0] as string).toLowerCase())
        expect((await viaProxy.call(...args)).toString('latin1'), `${args.join(' ')} from L1`).toBe(expected)
        expect(await commandCalls(direct, (read[0] as string).toLowerCase()), args.join(' ')).toBe(calls)
      }
    }
  })

  it('get from L1 the bytes Redis sends for every cacheable command, in every form of its reply', async () => {
    const sampled = new Set(CACHEABLE_CALLS.map((call) => call.command))
    expect([...CACHEABLE_COMMANDS].filter((command) => !sampled.has(command))).toEqual([])
    const { proxy, port, namespace } = await startProxy(redis().url)
    const prefix = `${namespace}:`
    const direct = new Redis(redis().url)
    closing.push(direct)
    await writeCacheableKeys(direct, prefix)
    await publishRegistry(
      direct,
      createNames(namespace),
      ...CACHEABLE_KEYS.map((key) => ({ key: prefix + key })),
    )
    const promoted = () =>
      CACHEABLE_KEYS.every((key) => proxy.agent.mitigation(prefix + key) === 'local_cache')
    await waitFor(promoted, 'the promotion')

    for (const protocol of ['3', '2']) {
      const viaRedis = await RawClient.open(Number(new URL(redis().url).port))
      const viaProxy = await RawClient.open(port)
      await Promise.all([viaRedis.call('HELLO', protocol), viaProxy.call('HELLO', protocol)])
      for (const { command, key, args } of CACHEABLE_CALLS) {
        const request = [command.toUpperCase(), prefix + key, ...args]
        const what = `${request.join(' ')} over RESP${protocol}`
        const expected = (await viaRedis.call(...request)).toString('latin1')
        // The first read may fill L1; the second is answered from it.
        expect((await viaProxy.call(...request)).toString('latin1'), what).toBe(expected)
        const calls = await commandCalls(direct, command)
        expect((await viaProxy.call(...request)).toString('latin1'), `${what} from L1`).toBe(expected)
        expect(await commandCalls(direct, command), what).toBe(calls)
      }
    }
  })

  it('have their reads counted and their writes invalidate L1, like any client', async () => {
    const { proxy, port, namespace } = await startProxy(redis().url)
    const key = `${namespace}:counted`
    const client = await RawClient.open(port)
    await client.call('HELLO', '3')
    const before = proxy.agent.stats().reads
    for (let i = 0; i < 20; i++) await client.call('HGETALL', key)
    expect(proxy.agent.stats().reads - before).toBe(20)
    const direct = new Redis(redis().url)
    closing.push(direct)
    await publishRegistry(direct, createNames(namespace), { key })
    await waitFor(() => proxy.agent.mitigation(key) === 'local_cache', 'the promotion')
    expect((await client.call('HGETALL', key)).toString()).toBe('%0\r\n')
    expect((await client.call('HGETALL', key)).toString()).toBe('%0\r\n')
    // Read your writes: the write evicts L1 before it is sent.
    expect((await client.call('HSET', key, 'f', '1')).toString()).toBe(':1\r\n')
    expect((await client.call('HGETALL', key)).toString()).toBe('%1\r\n$1\r\nf\r\n$1\r\n1\r\n')
  })

  it('get RESP3 types for split keys (a set, a score)', async () => {
    const { proxy, port, namespace } = await startProxy(redis().url)
    const set = `${namespace}:split-set`
    const zset = `${namespace}:split-z`
    const direct = new Redis(redis().url)
    closing.push(direct)
    await publishRegistry(
      direct,
      createNames(namespace),
      { key: set, mitigation: 'split', splitFactor: 4 },
      { key: zset, mitigation: 'split', splitFactor: 4 },
    )
    await waitFor(() => proxy.agent.mitigation(zset) === 'split', 'the promotion')
    const client = await RawClient.open(port)
    await client.call('HELLO', '3')
    expect((await client.call('SADD', set, 'a', 'b')).toString()).toBe(':2\r\n')
    const members = (await client.call('SMEMBERS', set)).toString()
    expect(members).toMatch(/^~2\r\n/)
    expect(members).toContain('$1\r\na\r\n')
    expect((await client.call('ZADD', zset, '2.5', 'm')).toString()).toBe(':1\r\n')
    expect((await client.call('ZSCORE', zset, 'm')).toString()).toBe(',2.5\r\n')
    expect((await client.call('ZSCORE', zset, 'none')).toString()).toBe('_\r\n')
    expect((await client.call('ZRANGE', zset, '0', '-1', 'WITHSCORES')).toString()).toBe(
      '*1\r\n*2\r\n$1\r\nm\r\n,2.5\r\n',
    )
  })
})
