import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'

const redis = useTestRedis()
const open: Redis[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

function client(namespace: string, url: string): Redis {
  const created = new Redis(url, { heatsink: { namespace, l1: { maxTtlMs: 60_000 } } })
  open.push(created)
  return created
}

describe('the ioredis front door', () => {
  it('answers as ioredis does and counts every command, known or not', async () => {
    const { namespace, url } = redis()
    const r = client(namespace, url)
    await r.heatsink.ready()
    const key = `${namespace}:h`
    await r.hset(key, { a: '1', b: '2' })
    expect(await r.hgetall(key)).toEqual({ a: '1', b: '2' })
    expect(await r.call('HGETALL', key)).toEqual(['a', '1', 'b', '2'])
    await expect(r.call('NOSUCHCOMMAND', key)).rejects.toThrow(/unknown command/)
    const stats = r.heatsink.stats()
    expect(stats.unknownCommands).toBe(1)
    expect(stats.reads).toBe(2)
    expect(stats.writes).toBe(1)
  })

  it('serves every read command of a local_cache key from L1, each as its command answers', async () => {
    const { namespace, url } = redis()
    const r = client(namespace, url)
    await r.heatsink.ready()
    const hash = `${namespace}:hash`
    const list = `${namespace}:list`
    const text = `${namespace}:text`
    await r.hset(hash, { f1: 'x', f2: 'y' })
    await r.rpush(list, 'a', 'b', 'c')
    await r.set(text, 'hello')
    await publishRegistry(r, createNames(namespace), { key: hash }, { key: list }, { key: text })
    await waitFor(() => r.heatsink.mitigation(text) === 'local_cache', 'the promotion')
    for (let round = 0; round < 3; round++) {
      expect(await r.hgetall(hash)).toEqual({ f1: 'x', f2: 'y' })
      expect(await r.hget(hash, 'f2')).toBe('y')
      expect(await r.lrange(list, 0, -1)).toEqual(['a', 'b', 'c'])
      expect(await r.get(text)).toBe('hello')
      expect((await r.getBuffer(text))?.toString()).toBe('hello')
      expect(await r.mget(text, `${namespace}:absent`)).toEqual(['hello', null])
    }
    // Round 1 fills each reply once; rounds 2 and 3 are hits (getBuffer shares GET's reply).
    expect(r.heatsink.stats().l1Hits).toBeGreaterThanOrEqual(10)
  })

  it('returns a value that looks like a getOrLoad envelope exactly as stored, for every mitigation', async () => {
    const { namespace, url } = redis()
    const r = client(namespace, url)
    await r.heatsink.ready()
    const lookalike = '\x1ehs1 0 0 n\n'
    const keys = { local_cache: `${namespace}:a`, coalesce: `${namespace}:b` } as const
    for (const key of Object.values(keys)) await r.set(key, lookalike)
    expect(await r.get(keys.local_cache)).toBe(lookalike)
    await publishRegistry(
      r,
      createNames(namespace),
      { key: keys.local_cache },
      { key: keys.coalesce, mitigation: 'coalesce' },
    )
    await waitFor(() => r.heatsink.mitigation(keys.coalesce) === 'coalesce', 'the promotion')
    for (let i = 0; i < 3; i++) {
      expect(await r.get(keys.local_cache)).toBe(lookalike)
      expect(await r.get(keys.coalesce)).toBe(lookalike)
    }
  })

  it('shares one round trip among identical concurrent reads of a coalesce key', async () => {
    const { namespace, url } = redis()
    const r = client(namespace, url)
    await r.heatsink.ready()
    const key = `${namespace}:herd`
    await r.rpush(key, 'a', 'b')
    await publishRegistry(r, createNames(namespace), { key, mitigation: 'coalesce' })
    await waitFor(() => r.heatsink.mitigation(key) === 'coalesce', 'the promotion')
    const before = r.heatsink.stats().coalescedReads
    const reads = await Promise.all(Array.from({ length: 100 }, () => r.lrange(key, 0, -1)))
    expect(reads.every((list) => list.join() === 'a,b')).toBe(true)
    const after = r.heatsink.stats().coalescedReads
    expect(after.sent - before.sent).toBe(1)
    expect(after.joined - before.joined).toBe(99)
    // A write ends the sharing: the read behind it is sent anew and sees it.
    const [, list] = await Promise.all([r.rpush(key, 'c'), r.lrange(key, 0, -1)])
    expect(list).toEqual(['a', 'b', 'c'])
  })

  it('refuses bad Heatsink options naming the option, and leaves no connection open', async () => {
    const { namespace, url } = redis()
    const plain = redis().client()
    const named = async () =>
      ((await plain.client('LIST')) as string)
        .split('\n')
        .filter(
          (line) =>
            line.includes(`name=app:${namespace}`) || line.includes(`name=heatsink:data:${namespace}`),
        )
    expect(
      () => new Redis(url, { connectionName: `app:${namespace}`, heatsink: { namespace, windowMs: 0 } }),
    ).toThrow(/windowMs/)
    // The data connection is made at once; neither it nor the client's own may stay.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(await named()).toEqual([])
  })

  it('leaves a subscribed connection to ioredis, which refuses reads there even of a cached key', async () => {
    const { namespace, url } = redis()
    const r = client(namespace, url)
    await r.heatsink.ready()
    const key = `${namespace}:cached`
    await r.set(key, 'v')
    await publishRegistry(r, createNames(namespace), { key })
    await waitFor(() => r.heatsink.mitigation(key) === 'local_cache', 'the promotion')
    await r.get(key)
    await waitFor(async () => {
      const hits = r.heatsink.stats().l1Hits
      await r.get(key)
      return r.heatsink.stats().l1Hits > hits
    }, 'an L1 hit')
    await r.subscribe(`${namespace}:channel`)
    await expect(r.get(key)).rejects.toThrow(/subscriber mode/)
  })
})
