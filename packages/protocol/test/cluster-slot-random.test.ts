import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type StartedRedisProcess, startRedisProcess } from '@heatsink/devservices'
import { seededRandom } from '@heatsink/workload'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisClusterSlot } from '../src/index.js'

// cluster-key-slot (ioredis' own slot function) is CommonJS without types.
const require = createRequire(import.meta.url)
const clusterKeySlot: (key: string | Buffer) => number = require('cluster-key-slot')

// Braces often, so that tags, empty tags, nested and unmatched braces all come up; two- three- and four-byte
// UTF-8 characters, so that the ASCII fast path's hand-over to the encoded bytes is exercised at every position.
const ALPHABET = ['a', 'b', 'z', '0', '9', ':', '-', '{', '}', '{', '}', 'é', '€', '😀']

function randomKeys(count: number, seed: number, extra: readonly string[] = []): string[] {
  const random = seededRandom(seed)
  const pick = (items: readonly string[]) => items[Math.floor(random() * items.length)] as string
  return Array.from({ length: count }, () => {
    const length = Math.floor(random() * 80)
    let key = ''
    for (let i = 0; i < length; i++) key += pick(extra.length > 0 && random() < 0.05 ? extra : ALPHABET)
    return key
  })
}

// Where cluster-key-slot 1.1.x departs from Redis: after an empty first tag (`foo{}{bar}`) it hashes whatever
// the next `}` closes instead of the whole key. Redis itself settles those keys in the test below.
function firstTagIsEmpty(key: string): boolean {
  const open = key.indexOf('{')
  return open !== -1 && key[open + 1] === '}'
}

describe('redisClusterSlot against cluster-key-slot', () => {
  it('agrees on 100,000 random keys, as strings and as Buffers, wherever that library follows Redis', () => {
    let compared = 0
    const mismatches: { key: string; ours: number[]; library: number[] }[] = []
    for (const key of randomKeys(100_000, 15)) {
      const bytes = Buffer.from(key, 'utf8')
      const ours = [redisClusterSlot(key), redisClusterSlot(bytes)]
      const library = firstTagIsEmpty(key) ? ours : [clusterKeySlot(key), clusterKeySlot(bytes)]
      if (ours[0] !== ours[1] || ours[0] !== library[0] || ours[1] !== library[1]) {
        mismatches.push({ key, ours, library })
      }
      if (!firstTagIsEmpty(key)) compared++
    }
    expect(mismatches).toEqual([])
    // Most keys are compared; the empty-tag ones are left to Redis below.
    expect(compared).toBeGreaterThan(80_000)
  })
})

describe('redisClusterSlot against Redis', () => {
  let dir: string
  let server: StartedRedisProcess
  let redis: Redis

  beforeAll(async () => {
    // CLUSTER KEYSLOT needs a cluster-enabled server, not a formed cluster: one private node is enough.
    dir = mkdtempSync(join(tmpdir(), 'heatsink-keyslot-'))
    server = await startRedisProcess({
      binary: 'redis-server',
      dir,
      service: 'redis-cluster',
      timeoutMs: 10_000,
      extraArgs: () => ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')],
    })
    redis = new Redis(server.port, '127.0.0.1')
  }, 20_000)

  afterAll(async () => {
    redis?.disconnect()
    await server?.process.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("gives CLUSTER KEYSLOT's slot for 20,000 random keys, empty tags and lone surrogates included", async () => {
    // Lone surrogates: ioredis writes each as U+FFFD's three bytes, and so must the string path hash it.
    const keys = [...randomKeys(20_000, 16, ['\uD83D', '\uDE00', '{}']), 'foo{}{bar}', '{}{a}', 'x{}y}']
    const pipeline = redis.pipeline()
    for (const key of keys) pipeline.call('CLUSTER', 'KEYSLOT', key)
    const replies = (await pipeline.exec()) ?? []
    const mismatches = keys.flatMap((key, i) => {
      const slot = replies[i]?.[1]
      const ours = [redisClusterSlot(key), redisClusterSlot(Buffer.from(key, 'utf8'))]
      return ours.every((s) => s === slot) ? [] : [{ key, redis: slot, ours }]
    })
    expect(mismatches).toEqual([])
  }, 30_000)
})
