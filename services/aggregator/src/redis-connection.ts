import { FollowingRedis, isSentinelUrl, keepSocketErrorsHandled, parseSentinelUrl } from '@heatsink/protocol'
import { Redis, type RedisOptions } from 'ioredis'

/** Where the aggregator's Redis is: a redis:// URL, or a redis+sentinel:// one and Sentinel's own password. */
export interface ControlRedisAddress {
  readonly redisUrl: string
  readonly sentinelPassword: string | null
}

/**
 * The aggregator's command connection (lazy; duplicate() it for blocking reads). With a Sentinel URL it follows the
 * primary: ioredis asks the sentinels for it on every (re)connect and checks with INFO that the server it reached is
 * a primary, and drops the connection on `+switch-master` (FollowingRedis), so a switch costs one reconnect rather
 * than waiting for Sentinel to kill the demoted primary's clients. A READONLY reply (a primary demoted under us)
 * reconnects too and resends the command: Redis refused it, so nothing ran twice.
 */
export function createControlRedis(address: ControlRedisAddress, options: RedisOptions): Redis {
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
 * For /readyz: throws unless the connection reaches a primary. PING alone answers on a demoted primary too, whose
 * writes all fail with READONLY, so a replica counts as not reaching a primary.
 */
export async function checkPrimary(redis: Redis): Promise<void> {
  const role = (await redis.call('ROLE')) as unknown[]
  if (role[0] !== 'master') {
    throw new Error(
      `connected to a ${String(role[0])} at ${redis.options.host}:${redis.options.port}, not a primary`,
    )
  }
}
