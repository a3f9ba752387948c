import type { RedisOptions } from 'ioredis'

/** True when ioredis reaches this deployment through Redis Sentinel (a `sentinels` list and a master name). */
export function usesSentinel(options: object): boolean {
  const { sentinels } = options as Pick<RedisOptions, 'sentinels'>
  return Array.isArray(sentinels) && sentinels.length > 0
}

/**
 * What the agent's own connections add to a Sentinel client's options so that they follow the primary.
 *
 * - `role: 'master'`: L1 is filled and tracked on the primary, whatever role the application's client reads
 *   from: a replica's tracking would vouch for a copy that lags, and only the primary has every write.
 * - `failoverDetector: true`: on `+switch-master` ioredis drops the connection and asks Sentinel again. Without
 *   it a connection stays on a demoted primary until Sentinel's CLIENT KILL reaches it, after clients that
 *   follow the switch have already read and written the new primary.
 */
export function followPrimary(options: object): Partial<RedisOptions> {
  return usesSentinel(options) ? { role: 'master', failoverDetector: true } : {}
}
