import { Redis, type RedisOptions } from 'ioredis'
import { type UseFixtureOptions, useFixture } from './fixture-hooks.js'
import { testNamespace } from './namespace.js'
import { requireServiceUrl } from './service-env.js'

// SCAN returns about COUNT entries per call; large batches keep cleanup of big namespaces to few round trips.
const SCAN_BATCH = 1_000

/** One test's slice of the shared Redis: a random namespace and the clients that use it. */
export interface TestRedis {
  /** The Redis to connect to (REDIS_URL from the global setup). */
  readonly url: string
  /** `hs-test-<random>`: use it as the Heatsink namespace or key prefix, so cleanup finds every key. */
  readonly namespace: string
  /** A new ioredis client on `url`, quit by cleanup(). */
  client(options?: RedisOptions): Redis
  /** Every key that starts with the namespace, sorted. */
  keys(): Promise<string[]>
  /** Quits every client from client(), then deletes every key that starts with the namespace. */
  cleanup(): Promise<void>
}

/** Options of createTestRedis. */
export interface CreateTestRedisOptions {
  /** Default: REDIS_URL, published by the global setup. */
  readonly url?: string
  /** Default: a fresh `hs-test-<random>`. */
  readonly namespace?: string
}

/** A fresh namespace on the shared test Redis, with tracked clients and a cleanup that removes its keys. */
export function createTestRedis(options: CreateTestRedisOptions = {}): TestRedis {
  const url = options.url ?? requireServiceUrl('REDIS_URL')
  const namespace = options.namespace ?? testNamespace()
  const pattern = `${escapeGlob(namespace)}*`
  const clients = new Set<Redis>()

  const withAdmin = async <T>(use: (admin: Redis) => Promise<T>): Promise<T> => {
    const admin = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      return await use(admin)
    } finally {
      admin.disconnect()
    }
  }
  const scanKeys = async (admin: Redis, onBatch: (keys: string[]) => Promise<void>) => {
    let cursor = '0'
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_BATCH)
      if (keys.length > 0) await onBatch(keys)
      cursor = next
    } while (cursor !== '0')
  }

  return {
    url,
    namespace,
    client(clientOptions = {}) {
      const client = new Redis(url, clientOptions)
      clients.add(client)
      return client
    },
    keys: () =>
      withAdmin(async (admin) => {
        const found = new Set<string>()
        await scanKeys(admin, async (keys) => {
          for (const key of keys) found.add(key)
        })
        return [...found].sort()
      }),
    async cleanup() {
      // Clients first, so nothing the test left running can write a key after the sweep.
      await Promise.all([...clients].map(closeClient))
      clients.clear()
      await withAdmin((admin) =>
        scanKeys(admin, async (keys) => {
          await admin.unlink(...keys)
        }),
      )
    },
  }
}

/** Gives every test in the calling file (or the file as a whole, with scope 'all') its own TestRedis. */
export function useTestRedis(options: UseFixtureOptions & CreateTestRedisOptions = {}): () => TestRedis {
  return useFixture(
    'useTestRedis',
    () => createTestRedis(options),
    (redis) => redis.cleanup(),
    options,
  )
}

async function closeClient(client: Redis): Promise<void> {
  if (client.status === 'end') return
  if (client.status === 'wait') {
    client.disconnect()
    return
  }
  await client.quit().catch(() => client.disconnect())
}

// Namespaces are plain, but one passed in could hold glob characters that would widen the sweep.
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
}
