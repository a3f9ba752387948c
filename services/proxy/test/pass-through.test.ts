import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { encodeRequest } from '../src/resp/request-parser.js'
import { expectReply, readUntil, startProxy, usePrivateRedis } from './support/proxy-fixture.js'

const redis = usePrivateRedis()

describe('the proxy in front of a standalone Redis', () => {
  it('answers a pipeline of many commands in order, as Redis does', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const through = client()
    const pipeline = through.pipeline()
    for (let i = 0; i < 500; i++) {
      pipeline.set(`${namespace}:${i}`, String(i))
      pipeline.get(`${namespace}:${i}`)
      pipeline.incr(`${namespace}:n`)
    }
    const results = (await pipeline.exec()) ?? []
    for (let i = 0; i < 500; i++) {
      expect(results[i * 3]).toEqual([null, 'OK'])
      expect(results[i * 3 + 1]).toEqual([null, String(i)])
      expect(results[i * 3 + 2]).toEqual([null, i + 1])
    }
  })

  it('takes requests delivered one byte at a time, and answers inline commands', async () => {
    const { socket, namespace } = await startProxy(redis().url)
    const s = await socket()
    const bytes = Buffer.concat([
      encodeRequest(['SET', `${namespace}:b`, 'x y']),
      Buffer.from(`GET ${namespace}:b\r\nPING\r\n`),
    ])
    const expected = '+OK\r\n$3\r\nx y\r\n+PONG\r\n'
    const reply = expectReply(s, expected)
    for (const byte of bytes) {
      s.write(Buffer.from([byte]))
      await new Promise((resolve) => setImmediate(resolve))
    }
    expect(await reply).toBe(expected)
  })

  it('is binary-safe for keys and values', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const through = client()
    const key = Buffer.concat([Buffer.from(`${namespace}:`), Buffer.from([0, 13, 10, 255])])
    const value = randomBytes(4096)
    await through.set(key, value)
    expect((await through.getBuffer(key))?.equals(value)).toBe(true)
    const direct = new Redis(redis().url)
    expect((await direct.getBuffer(key))?.equals(value)).toBe(true)
    direct.disconnect()
  })

  it('relays a 64 MB value both ways intact', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const through = client()
    const value = randomBytes(64 * 1024 * 1024)
    await through.set(`${namespace}:big`, value)
    const back = await through.getBuffer(`${namespace}:big`)
    expect(back?.length).toBe(value.length)
    expect(back?.equals(value)).toBe(true)
  })

  it("answers a malformed request with Redis' protocol error and closes only that connection", async () => {
    const { socket, client } = await startProxy(redis().url)
    const other = client()
    await other.ping()
    const bad = await socket()
    const closed = new Promise((resolve) => bad.once('close', resolve))
    bad.write('*1\r\n$3\r\nGET\r\n*2\r\n:3\r\n')
    const reply = await readUntil(bad, () => false)
    expect(reply.toString()).toMatch(
      /^-ERR wrong number of arguments for 'get' command\r\n-ERR Protocol error: expected '\$', got ':'\r\n$/,
    )
    await closed
    expect(await other.ping()).toBe('PONG')
  })

  it('passes Redis errors through unchanged', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const through = client()
    await through.set(`${namespace}:s`, 'v')
    await expect(through.lpush(`${namespace}:s`, 'x')).rejects.toThrow(
      /^WRONGTYPE Operation against a key holding the wrong kind of value/,
    )
    await expect(through.call('NOSUCHCOMMAND')).rejects.toThrow(/unknown command/)
  })

  it('answers requests in flight with an error when Redis goes away, and recovers when it is back', async () => {
    const { client, namespace } = await startProxy(redis().url)
    const through = client()
    await through.set(`${namespace}:r`, '1')
    // Every connection of the proxy to Redis is killed: shared ones and the agent's.
    const admin = new Redis(redis().url)
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
    // The first request may meet the dead connection; the proxy then opens a new one by itself.
    await through
      .get(`${namespace}:r`)
      .catch((error: Error) => expect(error.message).toMatch(/connection to redis lost/))
    expect(await through.get(`${namespace}:r`)).toBe('1')
    admin.disconnect()
  })
})
