import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import type { Redis } from 'ioredis'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { createAgent } from '../src/index.js'
import { publishRegistry } from '../src/testing.js'
import { startMonitor, useAgents, waitFor } from './support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

describe('wrapped commands', () => {
  it('have ioredis types exactly', () => {
    const agent = createAgent({ redis: 'redis://127.0.0.1:1', readyTimeoutMs: 1 })
    void agent.close()
    expectTypeOf(agent.get).toEqualTypeOf<Redis['get']>()
    expectTypeOf(agent.set).toEqualTypeOf<Redis['set']>()
    expectTypeOf(agent.del).toEqualTypeOf<Redis['del']>()
    expectTypeOf(agent.mget).toEqualTypeOf<Redis['mget']>()
    expectTypeOf(agent.redis).toEqualTypeOf<Redis>()
    // Never run: these calls compile, and only the types of their results matter here.
    const results = (client: Redis) => ({
      ex: [agent.set('k', 'v', 'EX', 10), client.set('k', 'v', 'EX', 10)] as const,
      pxNx: [agent.set('k', 'v', 'PX', 5, 'NX'), client.set('k', 'v', 'PX', 5, 'NX')] as const,
      get: [agent.get('k'), client.get('k')] as const,
      del: [agent.del('a', 'b'), client.del('a', 'b')] as const,
      mget: [agent.mget(['a', 'b']), client.mget(['a', 'b'])] as const,
    })
    type Results = ReturnType<typeof results>
    expectTypeOf<Results['ex'][0]>().toEqualTypeOf<Results['ex'][1]>()
    expectTypeOf<Results['ex'][0]>().toEqualTypeOf<Promise<'OK'>>()
    expectTypeOf<Results['pxNx'][0]>().toEqualTypeOf<Results['pxNx'][1]>()
    expectTypeOf<Results['pxNx'][0]>().toEqualTypeOf<Promise<'OK' | null>>()
    expectTypeOf<Results['get'][0]>().toEqualTypeOf<Results['get'][1]>()
    expectTypeOf<Results['del'][0]>().toEqualTypeOf<Results['del'][1]>()
    expectTypeOf<Results['mget'][0]>().toEqualTypeOf<Results['mget'][1]>()
  })

  it('answer as ioredis does, in every form, and are counted', async () => {
    const agent = newAgent()
    await agent.ready()
    const k = (name: string) => `${redis().namespace}:${name}`
    expect(await agent.set(k('a'), 'one')).toBe('OK')
    expect(await agent.set(k('a'), 'two', 'PX', 60_000, 'NX')).toBeNull()
    expect(await agent.set(k('a'), 'two', 'EX', 60, 'GET')).toBe('one')
    expect(await agent.redis.pttl(k('a'))).toBeGreaterThan(59_000)
    expect(await agent.set(k('b'), 2)).toBe('OK')
    expect(await agent.get(k('a'))).toBe('two')
    expect(await agent.get(Buffer.from(k('b')))).toBe('2')
    expect(await agent.get(k('none'))).toBeNull()
    expect(await agent.mget(k('a'), k('none'), k('b'))).toEqual(['two', null, '2'])
    expect(await agent.mget([k('b'), k('a')])).toEqual(['2', 'two'])
    const called = await new Promise((resolve, reject) =>
      agent.get(k('a'), (error, value) => (error ? reject(error) : resolve(value))),
    )
    expect(called).toBe('two')
    const setBack = await new Promise((resolve) => agent.set(k('c'), 'x', (_error, reply) => resolve(reply)))
    expect(setBack).toBe('OK')
    expect(await agent.del(k('a'), k('none'))).toBe(1)
    expect(await agent.del([k('b'), k('c')])).toBe(2)
    const error = await agent.redis
      .lpush(k('list'), 'x')
      .then(() => agent.get(k('list')).catch((e: Error) => e))
    expect(String(error)).toMatch(/WRONGTYPE/)
    expect(agent.stats()).toMatchObject({ requests: 14, reads: 10, writes: 9 })
  })

  it('SET and DEL go to Redis as SET and DEL in every form, leaving a getOrLoad lease alone, and answer as ioredis does', async () => {
    const agent = newAgent()
    await agent.ready()
    const { namespace, url } = redis()
    const names = createNames(namespace)
    const plain = redis().client()
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => `${namespace}:leased:${name}`) as [
      string,
      string,
      string,
      string,
    ]
    // As if another agent were loading each key: its lease is its own (see CommandRouter: plain commands are sent
    // as they are).
    for (const key of [a, b, c, d]) await plain.set(names.leaseKey(key), 'other-agent:token', 'PX', 60_000)
    const monitor = await startMonitor(url)

    expect(await agent.set(a, 'one', 'PX', 60_000)).toBe('OK')
    expect(await plain.exists(names.leaseKey(a))).toBe(1)
    expect(await agent.set(a, 'two', 'KEEPTTL', 'GET')).toBe('one')
    expect(await plain.pttl(a)).toBeGreaterThan(59_000)
    expect(await agent.set(a, 'three', 'NX')).toBeNull()
    expect(await agent.set(Buffer.from(b), 'bee', 'XX')).toBeNull()
    expect(await plain.exists(names.leaseKey(b))).toBe(1)
    const deleted = await new Promise((resolve, reject) =>
      agent.del(c, (error, count) => (error ? reject(error) : resolve(count))),
    )
    expect(deleted).toBe(0)
    expect(await agent.del([d, a, a])).toBe(1)
    expect(await plain.exists(a)).toBe(0)
    expect(await plain.exists(...[a, b, c, d].map((key) => names.leaseKey(key)))).toBe(4)
    expect(await agent.get(a)).toBeNull()
    await monitor.sync()
    monitor.stop()
    const sent = new Set(
      monitor.seen
        .filter((args) => args.some((arg) => arg.includes(`${namespace}:leased:`)))
        .map((args) => args[0]?.toLowerCase()),
    )
    expect(sent).toContain('set')
    expect(sent).toContain('del')
    expect([...sent].filter((command) => command?.startsWith('eval'))).toEqual([])

    // A Buffer key that is not UTF-8 (it cannot be a getOrLoad key) is written byte for byte.
    const binary = Buffer.concat([Buffer.from(`${namespace}:`), Buffer.from([0xff, 0xfe])])
    expect(await agent.set(binary, 'bytes')).toBe('OK')
    expect(await plain.get(binary)).toBe('bytes')
    expect(await agent.del(binary, `${namespace}:none`)).toBe(1)
    await expect(agent.del()).rejects.toThrow(/wrong number of arguments/)
  })

  it('MGET serves local_cache keys from L1 and sends only the rest to Redis', async () => {
    const { namespace, url } = redis()
    const hot = `${namespace}:hot`
    const cold = `${namespace}:cold`
    const plain = redis().client()
    await plain.set(hot, 'H')
    await plain.set(cold, 'C')
    const agent = newAgent({ l1: { maxTtlMs: 60_000 } })
    await agent.ready()
    await publishRegistry(plain, createNames(namespace), { key: hot })
    await waitFor(() => agent.stats().l1Entries === 1, 'L1 filled')
    const monitor = await startMonitor(url)
    try {
      expect(await agent.mget(cold, hot, `${namespace}:none`)).toEqual(['C', 'H', null])
      expect(await agent.mget(hot, hot)).toEqual(['H', 'H'])
      await monitor.sync()
      const mgets = monitor.seen.filter(
        (args) => args[0]?.toLowerCase() === 'mget' && args[1]?.startsWith(namespace),
      )
      expect(mgets.map((args) => args.slice(1))).toEqual([[cold, `${namespace}:none`]])
      expect(monitor.count('get', hot)).toBe(0)
      expect(agent.stats().l1Hits).toBe(3)
    } finally {
      monitor.stop()
    }
  })

  it('concurrent L1 misses of one key share one fill', async () => {
    const { namespace, url } = redis()
    const key = `${namespace}:shared`
    const plain = redis().client()
    await plain.set(key, 'v1')
    const agent = newAgent({ l1: { maxTtlMs: 60_000 } })
    await agent.ready()
    await publishRegistry(plain, createNames(namespace), { key })
    await waitFor(() => agent.stats().l1Entries === 1, 'L1 filled')
    await plain.set(key, 'v2')
    await waitFor(() => agent.stats().l1Entries === 0, 'the tracking invalidation')
    const monitor = await startMonitor(url)
    try {
      const values = await Promise.all(Array.from({ length: 50 }, () => agent.get(key)))
      expect(new Set(values)).toEqual(new Set(['v2']))
      await monitor.sync()
      expect(monitor.count('get', key)).toBe(1)
      expect(agent.stats()).toMatchObject({ l1Misses: 50, l1Entries: 1 })
    } finally {
      monitor.stop()
    }
  })

  it('leave the client and its pipelines as they were, so its own commands lose no speed', async () => {
    // Every property written onto an ioredis client is copied onto each pipeline it builds, including the one
    // enableAutoPipelining builds behind every plain GET; enough of them make V8 slow the client down.
    const client = redis().client({ enableAutoPipelining: true })
    const untouched = redis().client({ enableAutoPipelining: true })
    const agent = createAgent({ redis: client, namespace: redis().namespace })
    try {
      await agent.ready()
      const { namespace } = redis()
      await publishRegistry(client, createNames(namespace), {
        key: `${namespace}:views`,
        mitigation: 'split',
      })
      await waitFor(() => agent.mitigation(`${namespace}:views`) === 'split', 'the split to arrive')
      await agent.incr(`${namespace}:views`)
      await agent.set(`${namespace}:a`, 'x')
      await agent.del(`${namespace}:a`, `${namespace}:b`)
      await agent.getOrLoad(`${namespace}:loaded`, async () => 'value', { ttlSeconds: 60 })
      expect(Object.keys(client).sort()).toEqual(Object.keys(untouched).sort())
      expect(Object.keys(client.pipeline()).sort()).toEqual(Object.keys(untouched.pipeline()).sort())
    } finally {
      await agent.close()
    }
  })

  it('unwrapped commands stay reachable on agent.redis, unchanged', async () => {
    const client = redis().client()
    const agent = createAgent({ redis: client, namespace: redis().namespace })
    try {
      expect(agent.redis).toBe(client)
      const key = `${redis().namespace}:h`
      expect(await agent.redis.hset(key, 'f', 'v')).toBe(1)
      expect(await agent.redis.hgetall(key)).toEqual({ f: 'v' })
    } finally {
      await agent.close()
    }
  })
})
