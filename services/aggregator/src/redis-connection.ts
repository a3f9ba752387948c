import { isSentinelUrl, keepSocketErrorsHandled, parseSentinelUrl } from '@heatsink/protocol'
import { Cluster, Redis, type RedisOptions } from 'ioredis'
import { FollowingRedis } from './following-redis.js'

/**
 * Where the aggregator's Redis is: a redis:// URL (one node of a Cluster when `redisCluster`), or a
 * redis+sentinel:// one and Sentinel's own password.
 */
export interface ControlRedisAddress {
  readonly redisUrl: string
  readonly redisCluster: boolean
  readonly sentinelPassword: string | null
}

/**
 * The aggregator's command connection (lazy; duplicate() it for blocking reads). With a Sentinel URL it follows the
 * primary: ioredis asks the sentinels for it on every (re)connect and checks with INFO that the server it reached is
 * a primary, and drops the connection on `+switch-master` (FollowingRedis), so a switch costs one reconnect rather
 * than waiting for Sentinel to kill the demoted primary's clients. A READONLY reply (a primary demoted under us)
 * reconnects too and resends the command: Redis refused it, so nothing ran twice.
 */
export function createControlRedis(address: ControlRedisAddress, options: RedisOptions): Redis | Cluster {
  if (address.redisCluster) return clusterClient(address.redisUrl, options)
  if (!isSentinelUrl(address.redisUrl)) return keepSocketErrorsHandled(new Redis(address.redisUrl, options))
  const sentinel = parseSentinelUrl(address.redisUrl, {
    sentinelPassword: address.sentinelPassword ?? undefined,
  })
  return keepSocketErrorsHandled(
    new FollowingRedis({
      ...sentinel,
      reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
      ...options,
    }),
  )
}

/**
 * A Cluster seeded with the one node `url` names (the slot map gives the others). Every key and script the
 * aggregator touches is single-slot (see names.ts in @heatsink/protocol), so the same code runs on both.
 */
function clusterClient(redisUrl: string, options: RedisOptions): Cluster {
  const url = new URL(redisUrl)
  const auth: RedisOptions = {
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  }
  const { lazyConnect, ...perNode } = options
  const seed = { host: url.hostname, port: url.port === '' ? 6379 : Number(url.port) }
  return keepSocketErrorsHandled(new Cluster([seed], { lazyConnect, redisOptions: { ...perNode, ...auth } }))
}

/**
 * For /readyz: throws unless the connection reaches a primary. PING alone answers on a demoted primary too, whose
 * writes all fail with READONLY, so a replica counts as not reaching a primary. A Cluster client sends each
 * command to its slot's master, so PING through it is enough.
 */
export async function checkPrimary(redis: Redis | Cluster): Promise<void> {
  if (redis instanceof Cluster) {
    await redis.ping()
    return
  }
  const role = (await redis.call('ROLE')) as unknown[]
  if (role[0] !== 'master') {
    throw new Error(
      `connected to a ${String(role[0])} at ${redis.options.host}:${redis.options.port}, not a primary`,
    )
  }
}
