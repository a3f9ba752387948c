import type { RedisOptions } from 'ioredis'

/** True when ioredis reaches this deployment through Redis Sentinel (a `sentinels` list and a master name). */
export function usesSentinel(options: object): boolean {
  const { sentinels } = options as Pick<RedisOptions, 'sentinels'>
  return Array.isArray(sentinels) && sentinels.length > 0
}

// Where the agent's connections, all made on the primary, remember the role the application's client reads
// from: its L1 connections copy them and must read where that client reads.
const READS_FROM = 'heatsinkReadsFrom'

type SentinelRole = NonNullable<RedisOptions['role']>
type WithReadsFrom = Pick<RedisOptions, 'role'> & { [READS_FROM]?: SentinelRole }

/**
 * What the agent's own connections change in a Sentinel client's options: a quicker retry (below), and
 * `role: 'master'`: registry reads, reports and announcements must reach the primary whatever role the
 * application's client reads from.
 *
 * `failoverDetector` is left as the application set it, on purpose: the agent must be on the server the
 * application's client writes to. With it, both move on `+switch-master`; without it, both stay on the old
 * primary, which Sentinel leaves writable for about 8 s after a SENTINEL FAILOVER, until it reconfigures it
 * and kills its clients. An agent that moved alone would fill L1 from a primary the application's writes do
 * not reach, and serve values older than the application reads (measured: test/faults/sentinel-failover).
 */
export function followPrimary(options: object): Partial<RedisOptions> {
  if (!usesSentinel(options)) return {}
  return {
    role: 'master',
    retryStrategy: askSentinelAgain,
    [READS_FROM]: readsFrom(options),
  } as Partial<RedisOptions>
}

/**
 * The options of the connections L1 is filled and tracked on: those of followPrimary, on the role the
 * application's client reads from. With `role: 'slave'` its reads come from a replica, and L1's fills do too, as
 * a Cluster client's with `scaleReads: 'slave'`: a key turning hot keeps the freshness its reads had (a replica
 * tracks the keys its replication stream changes), and the primary takes none of them. Of several replicas the
 * first by address, unless the application chose (preferredSlaves): the subscriber and the tracking connection
 * must meet on one server.
 */
export function followReads(options: object): Partial<RedisOptions> {
  if (!usesSentinel(options) || readsFrom(options) !== 'slave') return followPrimary(options)
  const { preferredSlaves } = options as Pick<RedisOptions, 'preferredSlaves'>
  return { ...followPrimary(options), role: 'slave', preferredSlaves: preferredSlaves ?? firstByAddress }
}

function readsFrom(options: object): SentinelRole {
  const { role, [READS_FROM]: remembered } = options as WithReadsFrom
  return remembered ?? (role === 'slave' ? 'slave' : 'master')
}

type Replica = { ip: string; port: string }
const firstByAddress = (replicas: Replica[]): Replica | null =>
  [...replicas].sort((a, b) => `${a.ip}:${a.port}`.localeCompare(`${b.ip}:${b.port}`))[0] ?? null

// A crashed primary is replaced within seconds, and until a connection asks Sentinel again after that, L1 stays
// off: retrying every 250 ms at most (not the 2 s other connections back off to) brings L1 back within about half
// a second of the switch (measured: test/faults/sentinel-failover), for four sentinel queries a second per
// connection while no primary answers.
const askSentinelAgain = (attempt: number): number => Math.min(attempt * 50, 250)
