// Longer than 300 lines: one table of every write Redis can make, run through both front doors on one shared
// set-up (setUp); the table is most of the file.
import { DATABASE_CHECK_MS, Redis as FrontDoorRedis } from '@heatsink/agent'
import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import {
  promoteOnEvery,
  type RunningProxy,
  startProxy,
  usePrivateRedis,
  waitFor,
} from './support/proxy-fixture.js'

// FLUSHALL, SWAPDB, CONFIG and FUNCTION LOAD: a server of this file's own.
const redis = usePrivateRedis()
const clients: Array<{ disconnect(): void }> = []
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect()
})

// The documented bounds (docs/architecture.md, "Writes by other processes"): one delivery of Redis's tracking
// invalidation for every write Redis reports, and the database marker's check interval for SWAPDB, which Redis
// does not report. Asserted with an order of magnitude's room for a loaded machine; L1 entries here live 60 s,
// so a write that nothing reports would fail by far.
const DELIVERY_BOUND_MS = 250
const SWAPDB_BOUND_MS = 10 * DATABASE_CHECK_MS
const L1 = { maxTtlMs: 60_000, ttlFraction: 1 }

const LIBRARY = `#!lua name=heatsink_l1_test
redis.register_function('set_undeclared', function(keys, args) return redis.call('SET', args[1], args[2]) end)`

/** A way to reach Redis that writes: straight, or through the other front door. */
type Writer = Redis

interface WriteKind {
  name: string
  /** What the key reads after the write. */
  expected: string | null
  bound: number
  /** Made by Redis itself (expiry, eviction): no writer to vary. */
  byRedis?: true
  /** The key's TTL when it is set beforehand. */
  ttlMs?: number
  /**
   * Before L1 holds the key: a write there (to any database: tracking reports key names) would invalidate it.
   * `registry` is the registry snapshot's key.
   */
  prepare?(admin: Redis, key: string, registry: string): Promise<unknown>
  write(writer: Writer, key: string, admin: Redis): Promise<unknown>
}

// Each write leaves `key` holding 'new' (or nothing); `${key}:src` holds 'new' beforehand for those that copy.
const KINDS: WriteKind[] = [
  { name: 'FLUSHDB', expected: null, bound: DELIVERY_BOUND_MS, write: (w) => w.flushdb() },
  { name: 'FLUSHALL', expected: null, bound: DELIVERY_BOUND_MS, write: (w) => w.flushall() },
  {
    name: 'SWAPDB',
    expected: 'new',
    bound: SWAPDB_BOUND_MS,
    prepare: async (admin, key, registry) => {
      // The other database holds the same registry: only the swapped key can explain a new read.
      await admin.copy(registry, registry, 'DB', 1)
      await admin.select(1)
      await admin.set(key, 'new')
      await admin.select(0)
    },
    write: (w) => w.swapdb(0, 1),
  },
  { name: 'MOVE', expected: null, bound: DELIVERY_BOUND_MS, write: (w, key) => w.move(key, 1) },
  {
    name: 'COPY',
    expected: 'new',
    bound: DELIVERY_BOUND_MS,
    write: (w, key) => w.copy(`${key}:src`, key, 'REPLACE'),
  },
  {
    name: 'RENAME',
    expected: 'new',
    bound: DELIVERY_BOUND_MS,
    write: (w, key) => w.rename(`${key}:src`, key),
  },
  {
    name: 'RESTORE',
    expected: 'new',
    bound: DELIVERY_BOUND_MS,
    write: async (w, key, admin) => {
      const dump = await admin.dumpBuffer(`${key}:src`)
      return w.call('RESTORE', key, '0', dump as Buffer, 'REPLACE')
    },
  },
  {
    name: 'EVAL of an undeclared key',
    expected: 'new',
    bound: DELIVERY_BOUND_MS,
    write: (w, key) => w.eval("return redis.call('SET', ARGV[1], 'new')", 0, key),
  },
  {
    name: 'FCALL of an undeclared key',
    expected: 'new',
    bound: DELIVERY_BOUND_MS,
    write: async (w, key, admin) => {
      await admin.call('FUNCTION', 'LOAD', 'REPLACE', LIBRARY)
      return w.fcall('set_undeclared', 0, key, 'new')
    },
  },
  {
    // The key expires in Redis while L1 holds it; the write is its expiry, seen here by a read that finds it gone.
    name: 'expiry',
    expected: null,
    bound: DELIVERY_BOUND_MS,
    byRedis: true,
    ttlMs: 400,
    write: (_w, key, admin) => waitFor(async () => (await admin.pttl(key)) === -2, 'the expiry', 2000),
  },
  {
    name: 'eviction',
    expected: null,
    bound: DELIVERY_BOUND_MS,
    byRedis: true,
    ttlMs: 60_000,
    write: async (_w, _key, admin) => {
      // Only keys with a TTL (the hot key's, not the registry's) are evicted.
      await admin.config('SET', 'maxmemory-policy', 'volatile-random')
      await admin.config('SET', 'maxmemory', '1')
      // Any write makes Redis evict until it fits (here: everything), then refuses it.
      await admin.set('evict-trigger', 'x').catch(() => {})
      await admin.config('SET', 'maxmemory', '0')
    },
  },
]

interface Reader {
  name: string
  get(key: string): Promise<string | null>
  l1Hits(): number
  l1Entries(): number
}

interface Setup {
  admin: Redis
  namespace: string
  key: string
  readers: { frontDoor: Reader; proxy: Reader }
  /** The proxy reader's own connection. */
  proxyReader: Redis
  writers: { plain: Writer; proxy: Writer; frontDoor: Writer }
}

async function setUp(): Promise<Setup> {
  const url = redis().url
  const admin = new Redis(url)
  clients.push(admin)
  await admin.flushall()
  await admin.call('FUNCTION', 'FLUSH')
  const proxied: RunningProxy = await startProxy(url, { heatsink: { l1: L1 } })
  const { namespace } = proxied
  const heatsink = { namespace, l1: L1 }
  const frontDoor = new FrontDoorRedis(url, { heatsink })
  const frontDoorWriter = new FrontDoorRedis(url, { heatsink })
  clients.push(quitting(frontDoor), quitting(frontDoorWriter))
  await frontDoor.heatsink.ready()
  const key = `${namespace}:hot`
  await publishRegistry(admin, createNames(namespace), { key })
  await waitFor(
    () =>
      frontDoor.heatsink.mitigation(key) === 'local_cache' &&
      proxied.proxy.agent.mitigation(key) === 'local_cache',
    'the promotion',
  )
  const proxyReader = proxied.client()
  return {
    admin,
    namespace,
    key,
    readers: {
      frontDoor: {
        name: 'the front door',
        get: (k) => frontDoor.get(k),
        l1Hits: () => frontDoor.heatsink.stats().l1Hits,
        l1Entries: () => frontDoor.heatsink.stats().l1Entries,
      },
      proxy: {
        name: 'the proxy',
        get: (k) => proxyReader.get(k),
        l1Hits: () => proxied.proxy.agent.stats().l1Hits,
        l1Entries: () => proxied.proxy.agent.stats().l1Entries,
      },
    },
    proxyReader,
    writers: { plain: admin, proxy: proxied.client(), frontDoor: frontDoorWriter },
  }
}

// A front door's client quits, so that its process agent closes with it.
function quitting(client: FrontDoorRedis): { disconnect(): void } {
  return { disconnect: () => void client.quit().catch(() => {}) }
}

/** Reads `key` through `reader` until the read is an L1 hit of `value`. */
async function holdInL1(reader: Reader, key: string, value: string): Promise<void> {
  await waitFor(async () => {
    const hits = reader.l1Hits()
    const read = await reader.get(key)
    return read === value && reader.l1Hits() > hits
  }, `an L1 hit through ${reader.name}`)
}

/**
 * Milliseconds until `reader` reads `expected`, failing once `bound` has passed. Each read waits for the event
 * loop's I/O first, as a request to a server does: an L1 hit answers without yielding to I/O, so a loop of hits
 * alone would never let the invalidation in.
 */
async function msUntilSeen(reader: Reader, key: string, expected: string | null, bound: number) {
  const start = performance.now()
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve))
    const read = await reader.get(key)
    const elapsed = performance.now() - start
    if (read === expected) return elapsed
    if (elapsed > bound)
      throw new Error(`${reader.name} still read ${JSON.stringify(read)} after ${elapsed.toFixed(1)} ms`)
  }
}

describe('L1 ends its stale window for every write Redis can make', () => {
  for (const kind of KINDS) {
    const writers = kind.byRedis
      ? (['Redis itself'] as const)
      : (['a plain client', 'the other front door'] as const)
    for (const writerName of writers) {
      for (const readerName of ['frontDoor', 'proxy'] as const) {
        it(`${kind.name} by ${writerName}: ${readerName}'s L1 serves the new value within ${kind.bound} ms`, async () => {
          const { admin, namespace, key, readers, writers: w } = await setUp()
          const reader = readers[readerName]
          if (kind.ttlMs === undefined) await admin.set(key, 'old')
          else await admin.set(key, 'old', 'PX', kind.ttlMs)
          await admin.set(`${key}:src`, 'new')
          await kind.prepare?.(admin, key, createNames(namespace).registrySnapshotKey)
          await holdInL1(reader, key, 'old')
          // The other front door for the front door's L1 is the proxy, and for the proxy's L1 the front door.
          const writer =
            writerName !== 'the other front door'
              ? w.plain
              : readerName === 'frontDoor'
                ? w.proxy
                : w.frontDoor
          await kind.write(writer, key, admin)
          expect(await msUntilSeen(reader, key, kind.expected, kind.bound)).toBeLessThan(kind.bound)
        })
      }
    }
  }
})

describe('the database marker', () => {
  it('is written only once a process fills L1', async () => {
    const admin = new Redis(redis().url)
    clients.push(admin)
    await admin.flushall()
    const proxied = await startProxy(redis().url, { heatsink: { l1: L1 } })
    const marker = createNames(proxied.namespace).databaseMarkerKey
    const key = `${proxied.namespace}:hot`
    await admin.set(key, 'v')
    const client = proxied.client()
    for (let i = 0; i < 10; i++) expect(await client.get(key)).toBe('v')
    await new Promise((resolve) => setTimeout(resolve, 3 * DATABASE_CHECK_MS))
    expect(await admin.exists(marker)).toBe(0)
    await promoteOnEvery(admin, key, [proxied])
    await waitFor(async () => (await admin.exists(marker)) === 1, 'the marker')
  })
})

describe('scripts that declare no key', () => {
  it('leave L1 as it is: other keys stay hits, on both front doors', async () => {
    const { admin, namespace, key, readers, writers } = await setUp()
    const other = `${key}:other`
    await publishRegistry(admin, createNames(namespace), { key: other })
    await admin.set(key, 'a')
    await admin.set(other, 'b')
    for (const reader of Object.values(readers)) {
      await holdInL1(reader, other, 'b')
      await holdInL1(reader, key, 'a')
    }
    for (const writer of [writers.frontDoor, writers.proxy]) {
      expect(await writer.eval("return redis.call('GET', ARGV[1])", 0, key)).toBe('a')
      expect(await writer.eval('return 1', 0)).toBe(1)
    }
    for (const reader of Object.values(readers)) {
      const hits = reader.l1Hits()
      expect(await reader.get(key)).toBe('a')
      expect(await reader.get(other)).toBe('b')
      expect(reader.l1Hits() - hits).toBe(2)
    }
  })
})

describe('a script writing a local_cache key it does not declare', () => {
  it('is read back on the same connection through the proxy, 500 of 500 times (awaited and pipelined)', async () => {
    const { admin, key, readers, proxyReader } = await setUp()
    await admin.set(key, 'seed')
    await holdInL1(readers.proxy, key, 'seed')
    const script = "return redis.call('SET', ARGV[1], ARGV[2])"
    const hits = readers.proxy.l1Hits()
    for (let i = 0; i < 500; i++) {
      const written = `v${i}`
      if (i % 2 === 0) {
        await proxyReader.eval(script, 0, key, written)
        expect(await proxyReader.get(key)).toBe(written)
      } else {
        const results = await proxyReader.pipeline().eval(script, 0, key, written).get(key).exec()
        expect(results?.[1]).toEqual([null, written])
      }
      // Read again once the barrier has passed: from L1 when it holds the new value, never the old one.
      await new Promise((resolve) => setImmediate(resolve))
      expect(await proxyReader.get(key)).toBe(written)
    }
    // L1 still serves the key between scripts (a keyless script no longer empties it).
    expect(readers.proxy.l1Hits()).toBeGreaterThan(hits)
  })
})
