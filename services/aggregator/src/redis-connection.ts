import { FollowingRedis } from '@heatsink/agent'
import { isSentinelUrl, keepSocketErrorsHandled, parseSentinelUrl, redactUrl } from '@heatsink/protocol'
import { Cluster, Redis, type RedisOptions } from 'ioredis'
import { ConfigError } from './errors.js'

/**
 * Where the aggregator's Redis is: a redis:// URL (one node of a Cluster when `redisCluster`), or a
 * redis+sentinel:// one and Sentinel's own password.
 */
export interface ControlRedisAddress {
  readonly redisUrl: string
  /** The variable redisUrl came from (HEATSINK_CONTROL_REDIS_URL or REDIS_URL), for errors about it. */
  readonly redisUrlVariable: string
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
  const auth = urlLogin(redisUrl)
  const { lazyConnect, ...perNode } = options
  const seed = { host: url.hostname, port: url.port === '' ? 6379 : Number(url.port) }
  return keepSocketErrorsHandled(new Cluster([seed], { lazyConnect, redisOptions: { ...perNode, ...auth } }))
}

/** The user, password and TLS a redis:// or rediss:// URL names, for connections made to each node. */
export function urlLogin(redisUrl: string): RedisOptions {
  const url = new URL(redisUrl)
  return {
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  }
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

/**
 * Refuses, at start, a Redis Cluster node given as one server: every command on another master's slot would fail
 * with MOVED while the replica looked started. REDIS_URL runs on a Cluster with HEATSINK_REDIS_CLUSTER=true, a
 * control Redis (HEATSINK_CONTROL_REDIS_URL) with HEATSINK_CONTROL_REDIS_CLUSTER=true.
 */
export async function refuseUnflaggedCluster(
  redis: Redis | Cluster,
  address: ControlRedisAddress,
): Promise<void> {
  if (redis instanceof Cluster) return
  const info = await redis.info('cluster')
  if (!/^cluster_enabled:1/m.test(info)) return
  const remedy =
    address.redisUrlVariable === 'REDIS_URL'
      ? 'set HEATSINK_REDIS_CLUSTER=true to run the control plane on that Cluster'
      : "set HEATSINK_CONTROL_REDIS_CLUSTER=true to keep Heatsink's state on that Cluster"
  throw new ConfigError([
    `${address.redisUrlVariable}: names a node of a Redis Cluster (cluster_enabled:1), got '${redactUrl(address.redisUrl)}'; ${remedy}`,
  ])
}

/**
 * Closes a connection: QUIT lets queued commands finish; a connection that never came up has nothing to finish.
 * Resolves once the connection is closed, so a stopped aggregator holds no socket.
 */
export async function quitRedis(redis: Redis | Cluster): Promise<void> {
  if (redis.status === 'end') return
  if (redis.status === 'wait') {
    redis.disconnect()
    return
  }
  const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()))
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect())
  else redis.disconnect()
  await ended
}
