import { randomBytes } from 'node:crypto'
import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import {
  commandCalls,
  promoteOnEvery,
  startProxy,
  usePrivateRedis,
  waitFor,
} from './support/proxy-fixture.js'

const redis = usePrivateRedis()
const admins: Redis[] = []
afterEach(() => {
  for (const admin of admins.splice(0)) admin.disconnect()
})

function admin(): Redis {
  const client = new Redis(redis().url)
  admins.push(client)
  return client
}

// The documented bound for a write to be seen through another proxy's L1: one delivery of the invalidation
// (tracking or broadcast), asserted with room for a shared, noisy machine.
const BOUND_MS = 200

describe('hot keys through the proxy', () => {
  it('answers reads of a local_cache key from L1: they never reach Redis', async () => {
    const first = await startProxy(redis().url)
    const { namespace } = first
    const direct = admin()
    const key = `${namespace}:hot`
    await direct.set(key, 'value')
    await direct.hset(`${key}:h`, 'f', '1')
    await publishRegistry(direct, createNames(namespace), { key }, { key: `${key}:h` })
    await waitFor(() => first.proxy.agent.mitigation(key) === 'local_cache', 'the promotion')
    const client = first.client()
    // The first read after the promotion may still fill L1.
    expect(await client.get(key)).toBe('value')
    expect(await client.hgetall(`${key}:h`)).toEqual({ f: '1' })
    const gets = await commandCalls(direct, 'get')
    const hgetalls = await commandCalls(direct, 'hgetall')
    for (let i = 0; i < 1000; i++) expect(await client.get(key)).toBe('value')
    const pipeline = client.pipeline()
    for (let i = 0; i < 1000; i++) pipeline.hgetall(`${key}:h`)
    for (const [error, reply] of (await pipeline.exec()) ?? [])
      expect([error, reply]).toEqual([null, { f: '1' }])
    expect(await commandCalls(direct, 'get')).toBe(gets)
    expect(await commandCalls(direct, 'hgetall')).toBe(hgetalls)
    expect(first.proxy.stats.served).toBeGreaterThanOrEqual(2000)
  })

  it('counts reads through the proxy in its reports, so the control plane sees them', async () => {
    const { client, namespace, proxy } = await startProxy(redis().url, { heatsink: { windowMs: 200 } })
    const c = client()
    const before = proxy.agent.stats().reads
    for (let i = 0; i < 50; i++) await c.get(`${namespace}:counted`)
    expect(proxy.agent.stats().reads - before).toBe(50)
    const direct = admin()
    await waitFor(
      async () => (await direct.keys(`${namespace}:reports:*`)).length > 0,
      'a report stream written by the proxy agent',
    )
  })

  it('sees a write through another proxy, and a write straight to Redis, within the bound', async () => {
    const a = await startProxy(redis().url)
    const namespace = a.namespace
    const b = await startProxy(redis().url, { heatsink: { namespace } })
    const direct = admin()
    const key = `${namespace}:shared`
    await direct.set(key, '0')
    await promoteOnEvery(direct, key, [a, b])
    const writer = a.client()
    const reader = b.client()
    const lags: number[] = []
    for (let i = 1; i <= 100; i++) {
      // The reader's L1 holds the old value before each write, so only an invalidation explains the new one.
      await waitFor(async () => {
        const served = b.proxy.stats.served
        await reader.get(key)
        return b.proxy.stats.served > served
      }, 'an L1 hit')
      const viaProxy = i % 2 === 0
      await (viaProxy ? writer : direct).set(key, String(i))
      const written = performance.now()
      while ((await reader.get(key)) !== String(i)) {
        expect(performance.now() - written).toBeLessThan(BOUND_MS)
      }
      lags.push(performance.now() - written)
    }
    lags.sort((x, y) => x - y)
    console.log(
      `write seen through the other proxy after p50 ${lags[50]?.toFixed(2)} ms, p99 ${lags[98]?.toFixed(2)} ms (100 writes, half through a proxy, half direct)`,
    )
  })

  it('a client reads its own write through the proxy at once, even for a local_cache key', async () => {
    const { client, proxy, namespace } = await startProxy(redis().url)
    const direct = admin()
    const key = `${namespace}:own`
    await direct.set(key, '0')
    await publishRegistry(direct, createNames(namespace), { key })
    await waitFor(() => proxy.agent.mitigation(key) === 'local_cache', 'the promotion')
    const c = client()
    for (let i = 1; i <= 200; i++) {
      const pipeline = c.pipeline().set(key, String(i)).get(key)
      const results = (await pipeline.exec()) ?? []
      expect(results[1]).toEqual([null, String(i)])
      expect(await c.get(key)).toBe(String(i))
    }
  })

  it('sends identical concurrent reads of a coalesce key from many client connections to Redis once', async () => {
    const { client, proxy, namespace } = await startProxy(redis().url)
    const direct = admin()
    const key = `${namespace}:herd`
    await direct.set(key, 'shared')
    await publishRegistry(direct, createNames(namespace), { key, mitigation: 'coalesce' })
    await waitFor(() => proxy.agent.mitigation(key) === 'coalesce', 'the promotion')
    const clients = Array.from({ length: 40 }, () => client())
    await Promise.all(clients.map((c) => c.ping()))
    const gets = await commandCalls(direct, 'get')
    // Redis is paused so that every read is in flight at once.
    await direct.client('PAUSE', 300, 'ALL')
    const replies = await Promise.all(clients.map((c) => c.get(key)))
    expect(replies.every((reply) => reply === 'shared')).toBe(true)
    // One GET for the herd (the first read may still be counted apart while the promotion settles).
    expect((await commandCalls(direct, 'get')) - gets).toBeLessThanOrEqual(2)
  })

  it('relays a coalesce key whose value is too large to share (2 MB) to every reader intact, each from Redis', async () => {
    const { client, proxy, namespace } = await startProxy(redis().url)
    const direct = admin()
    const key = `${namespace}:large-herd`
    const value = randomBytes(2 * 1024 * 1024)
    await direct.set(key, value)
    await publishRegistry(direct, createNames(namespace), { key, mitigation: 'coalesce' })
    await waitFor(() => proxy.agent.mitigation(key) === 'coalesce', 'the promotion')
    const clients = Array.from({ length: 10 }, () => client())
    await Promise.all(clients.map((c) => c.ping()))
    await direct.client('PAUSE', 200, 'ALL')
    const replies = await Promise.all(clients.map((c) => c.getBuffer(key)))
    for (const reply of replies) expect(reply?.equals(value)).toBe(true)
  })

  it('shards a split key behind its logical name: counter writes spread, reads summed', async () => {
    const { client, proxy, namespace } = await startProxy(redis().url)
    const direct = admin()
    const key = `${namespace}:likes`
    await publishRegistry(direct, createNames(namespace), { key, mitigation: 'split', splitFactor: 4 })
    await waitFor(() => proxy.agent.mitigation(key) === 'split', 'the promotion')
    // Writes stay on the key for a moment while the layout reaches every agent.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    const c = client()
    for (let i = 0; i < 100; i++) await c.incr(key)
    expect(await c.get(key)).toBe('100')
    // The increments landed on several shards (`...:d:<key>`), not on the key Redis holds under that name.
    expect((await direct.keys(`*:d:${key}`)).length).toBeGreaterThan(1)
    expect(await direct.get(key)).not.toBe('100')
  }, 15_000)
})
