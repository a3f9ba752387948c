import type { RedisOptions } from 'ioredis'

/** True when ioredis reaches this deployment through Redis Sentinel (a `sentinels` list and a master name). */
export function usesSentinel(options: object): boolean {
  const { sentinels } = options as Pick<RedisOptions, 'sentinels'>
  return Array.isArray(sentinels) && sentinels.length > 0
}

/**
 * What the agent's own connections change in a Sentinel client's options: a quicker retry (below), and
 * `role: 'master'`, so that L1 is
 * filled and tracked on the primary whatever role the application's client reads from (a replica's tracking
 * would vouch for a copy that lags, and only the primary has every write).
 *
 * `failoverDetector` is left as the application set it, on purpose: the agent must be on the server the
 * application's client writes to. With it, both move on `+switch-master`; without it, both stay on the old
 * primary, which Sentinel leaves writable for about 8 s after a SENTINEL FAILOVER, until it reconfigures it
 * and kills its clients. An agent that moved alone would fill L1 from a primary the application's writes do
 * not reach, and serve values older than the application reads (measured: test/faults/sentinel-failover).
 */
export function followPrimary(options: object): Partial<RedisOptions> {
  return usesSentinel(options) ? { role: 'master', retryStrategy: askSentinelAgain } : {}
}

// A crashed primary is replaced within seconds, and until a connection asks Sentinel again after that, L1 stays
// off: retrying every 250 ms at most (not the 2 s other connections back off to) brings L1 back within about half
// a second of the switch (measured: test/faults/sentinel-failover), for four sentinel queries a second per
// connection while no primary answers.
const askSentinelAgain = (attempt: number): number => Math.min(attempt * 50, 250)
