import { randomBytes } from 'node:crypto'
import { type Aggregator, createAggregator, createPgDatabase, loadConfig } from '@heatsink/aggregator'
import { Redis } from 'ioredis'
import { benchNamespace, benchRedisUrl, removeNamespace } from './support.js'

/** An aggregator replica in the benchmark's process, on a namespace and Postgres schema of its own. */
export interface BenchAggregator {
  aggregator: Aggregator
  namespace: string
  redisUrl: string
  /** A plain client on the same Redis. */
  redis: Redis
  /** Stops the replica and removes its schema and every key of its namespace. */
  close(): Promise<void>
}

export async function startBenchAggregator(
  name: string,
  env: Record<string, string>,
): Promise<BenchAggregator> {
  const redisUrl = benchRedisUrl()
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const namespace = benchNamespace(name)
  const schema = `bench_${randomBytes(4).toString('hex')}`
  const admin = createPgDatabase(databaseUrl)
  await admin.query(`CREATE SCHEMA ${schema}`)
  const url = new URL(databaseUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const db = createPgDatabase(url.toString())
  const redis = new Redis(redisUrl)
  const aggregator = createAggregator(
    loadConfig({
      REDIS_URL: redisUrl,
      DATABASE_URL: url.toString(),
      HEATSINK_NAMESPACE: namespace,
      PORT: '0',
      ...env,
    }),
    { db },
  )
  const close = async () => {
    await aggregator.stop()
    await db.close()
    await admin.query(`DROP SCHEMA ${schema} CASCADE`)
    await admin.close()
    await removeNamespace(redis, namespace)
    await redis.quit()
  }
  try {
    await aggregator.start()
  } catch (error) {
    await close().catch(() => {})
    throw error
  }
  return { aggregator, namespace, redisUrl, redis, close }
}
