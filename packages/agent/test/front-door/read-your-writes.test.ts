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

const ROUNDS = 1000
const MAX_READS_PER_ROUND = 50

// A client whose key is local_cache with L1 entries that outlive the test: only an eviction explains a new value.
async function hotClient(key: string, autopipelining: boolean): Promise<Redis> {
  const { namespace, url } = redis()
  const r = new Redis(url, {
    enableAutoPipelining: autopipelining,
    heatsink: { namespace, l1: { maxTtlMs: 60_000 } },
  })
  open.push(r)
  await r.heatsink.ready()
  await publishRegistry(r, createNames(namespace), { key })
  await waitFor(() => r.heatsink.mitigation(key) === 'local_cache', 'the promotion')
  return r
}

// Each write form, and the read that must see it at once.
const WRITES: Array<{
  name: string
  seed(r: Redis, key: string): Promise<unknown>
  write(r: Redis, key: string, i: number): Promise<unknown>
  read(r: Redis, key: string): Promise<unknown>
  expected(i: number): unknown
}> = [
  {
    name: 'SET',
    seed: (r, key) => r.set(key, 'seed'),
    write: (r, key, i) => r.set(key, `v${i}`),
    read: (r, key) => r.get(key),
    expected: (i) => `v${i}`,
  },
  {
    name: 'SET in a pipeline',
    seed: (r, key) => r.set(key, 'seed'),
    write: (r, key, i) => r.pipeline().set(key, `v${i}`).exec(),
    read: (r, key) => r.get(key),
    expected: (i) => `v${i}`,
  },
  {
    name: 'SET in MULTI',
    seed: (r, key) => r.set(key, 'seed'),
    write: (r, key, i) => r.multi().set(key, `v${i}`).exec(),
    read: (r, key) => r.get(key),
    expected: (i) => `v${i}`,
  },
  {
    name: 'EVAL',
    seed: (r, key) => r.set(key, 'seed'),
    write: (r, key, i) => r.eval("return redis.call('SET', KEYS[1], ARGV[1])", 1, key, `v${i}`),
    read: (r, key) => r.get(key),
    expected: (i) => `v${i}`,
  },
  {
    // Redis allows it outside Cluster: the router cannot know the key, tracking reports it (ScriptBarriers).
    name: 'EVAL writing a key it does not declare',
    seed: (r, key) => r.set(key, 'seed'),
    write: (r, key, i) => r.eval("return redis.call('SET', ARGV[1], ARGV[2])", 0, key, `v${i}`),
    read: (r, key) => r.get(key),
    expected: (i) => `v${i}`,
  },
  {
    name: 'EVAL in MULTI writing a key it does not declare',
    seed: (r, key) => r.set(key, 'seed'),
    write: (r, key, i) =>
      r.multi().eval("return redis.call('SET', ARGV[1], ARGV[2])", 0, key, `v${i}`).exec(),
    read: (r, key) => r.get(key),
    expected: (i) => `v${i}`,
  },
  {
    name: 'HSET',
    seed: (r, key) => r.hset(key, 'f', 'seed'),
    write: (r, key, i) => r.hset(key, 'f', `v${i}`),
    read: (r, key) => r.hgetall(key),
    expected: (i) => ({ f: `v${i}` }),
  },
  {
    name: 'APPEND',
    seed: (r, key) => r.set(key, ''),
    write: (r, key) => r.append(key, 'x'),
    read: (r, key) => r.strlen(key),
    expected: (i) => i + 1,
  },
  {
    // EXPIRE with a time already past deletes the key at once (Redis 7), so the next GET must miss.
    name: 'EXPIRE',
    seed: (r, key) => r.set(key, 'v'),
    write: (r, key, i) => (i % 2 === 0 ? r.expire(key, 0) : r.set(key, `v${i}`)),
    read: (r, key) => r.get(key),
    expected: (i) => (i % 2 === 0 ? null : `v${i}`),
  },
  {
    name: 'DEL',
    seed: (r, key) => r.set(key, 'v'),
    write: (r, key, i) => (i % 2 === 0 ? r.del(key) : r.set(key, `v${i}`)),
    read: (r, key) => r.get(key),
    expected: (i) => (i % 2 === 0 ? null : `v${i}`),
  },
]

describe('read-your-writes on a local_cache key', () => {
  for (const autopipelining of [false, true]) {
    for (const form of WRITES) {
      it(`${form.name}${autopipelining ? ', autopipelined' : ''}: the next read sees the write, ${ROUNDS} times`, async () => {
        const key = `${redis().namespace}:ryw`
        const r = await hotClient(key, autopipelining)
        await form.seed(r, key)
        // Each round reads until one read is served from L1, so the next round's write must evict a cached
        // entry before its own read. Reads go to Redis for a while after a write: a fill in flight when Redis
        // tracking reports the write is not stored, and a script's connection reads behind its barrier (a PING
        // round trip on the subscriber), so how many reads that takes depends on the machine's load.
        let roundsWithAHit = 0
        for (let i = 0; i < ROUNDS; i++) {
          await form.write(r, key, i)
          const hitsBefore = r.heatsink.stats().l1Hits
          for (let read = 0; read < MAX_READS_PER_ROUND; read++) {
            expect(await form.read(r, key)).toEqual(form.expected(i))
            if (r.heatsink.stats().l1Hits > hitsBefore) {
              roundsWithAHit++
              break
            }
          }
        }
        expect(roundsWithAHit).toBeGreaterThan(ROUNDS / 2)
      })
    }
  }

  it('a read issued right behind an unawaited write sees it', async () => {
    const key = `${redis().namespace}:ryw`
    const r = await hotClient(key, true)
    await r.set(key, 'seed')
    await r.get(key)
    for (let i = 0; i < ROUNDS; i++) {
      const written = r.set(key, `v${i}`)
      expect(await r.get(key)).toBe(`v${i}`)
      await written
    }
  })
})
