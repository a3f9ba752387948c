import { keepSocketErrorsHandled } from '@heatsink/protocol'
import { Cluster, Redis, type RedisOptions } from 'ioredis'

/** What openRedis needs of the configuration. */
export interface RedisClientConfig {
  readonly redisUrl: string
  /** redisUrl names one node of a Redis Cluster. */
  readonly redisCluster: boolean
  readonly replicaId: string
}

/**
 * The aggregator's command connection, not yet connected: a standalone Redis, or a Cluster seeded with the one
 * node redisUrl names (the slot map gives the others). Every key and script the aggregator touches is
 * single-slot (see names.ts in @heatsink/protocol), so the same code runs on both.
 */
export function openRedis(config: RedisClientConfig): Redis | Cluster {
  const own: RedisOptions = {
    // Fail a command after a couple of reconnect attempts rather than hold an API request for a long outage.
    maxRetriesPerRequest: 2,
    connectionName: `heatsink-aggregator:${config.replicaId}`,
  }
  if (!config.redisCluster) {
    return keepSocketErrorsHandled(new Redis(config.redisUrl, { lazyConnect: true, ...own }))
  }
  const url = new URL(config.redisUrl)
  const auth: RedisOptions = {
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  }
  return keepSocketErrorsHandled(
    new Cluster([{ host: url.hostname, port: url.port === '' ? 6379 : Number(url.port) }], {
      lazyConnect: true,
      redisOptions: { ...own, ...auth },
    }),
  )
}
