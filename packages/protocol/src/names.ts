import { InvalidNamespaceError } from './errors.js'
import { sameSlotTag } from './slot-tag.js'

/** Namespace used when none is given. */
export const DEFAULT_NAMESPACE = 'heatsink'
/** Report streams used when `reportShards` is not given. */
export const DEFAULT_REPORT_SHARDS = 8
/** Upper bound on `reportShards`; far above what one aggregator fleet reads, so a typo fails early. */
export const MAX_REPORT_SHARDS = 1024

// No braces, so no name Heatsink builds can carry a hash tag of its own.
const NAMESPACE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/

/** Every Redis key, stream and channel name Heatsink owns; all start with `${namespace}:`. */
export interface HeatsinkNames {
  readonly namespace: string
  /** Streams agents append reports to; an agent always writes to the same one (`reportStreamFor`). */
  readonly reportStreams: readonly string[]
  /** The report stream for an agent, chosen by a stable hash of its id. */
  reportStreamFor(agentId: string): string
  /** Stream where the aggregator sets aside reports it could not decode. */
  readonly deadLetterStream: string
  /** Consumer group the aggregator replicas share on every report stream. */
  readonly consumerGroup: string
  /** Pub/sub channel carrying encoded `RegistryEvent`s. */
  readonly registryChannel: string
  /** Pub/sub channel carrying encoded `Invalidation`s. */
  readonly invalidationChannel: string
  /**
   * Redis hash with fields `version` (the registry version, an integer) and `snapshot` (an encoded
   * `RegistrySnapshot` of that version). A hash, so one script can compare versions and replace both.
   */
  readonly registrySnapshotKey: string
  /**
   * The lease (single-flight lock) guarding the upstream load of one cache key. It is in the same slot as the
   * key, so one script can fill the key only while the lease is still held, on a Redis Cluster too.
   */
  leaseKey(key: string): string
  /** Where agents announce themselves. */
  readonly agentsKey: string
  /**
   * The aggregator's per-window counters for one counter shard, a hash: field `<agent>\n<key>` holds that
   * agent's largest reported `count writes misses` for the key, field `\n<key>` the cluster-wide sums, both as
   * three space-separated integers. The hash tag keeps one window-shard in one slot, so one script updates it
   * atomically, while different shards and windows spread over a Cluster.
   */
  windowCountersKey(windowStart: number, shard: number): string
  /** Per-agent statistics of one registered key (hash: agent id -> encoded HotKeyStats with its window). */
  keyStatsKey(keyHash: string): string
}

/** Build the Redis names for one Heatsink deployment; throws InvalidNamespaceError on a bad namespace. */
export function createNames(
  namespace: string = DEFAULT_NAMESPACE,
  options: { reportShards?: number } = {},
): HeatsinkNames {
  if (typeof namespace !== 'string' || !NAMESPACE_PATTERN.test(namespace)) {
    throw new InvalidNamespaceError(namespace)
  }
  const shards = options.reportShards ?? DEFAULT_REPORT_SHARDS
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_REPORT_SHARDS) {
    throw new RangeError(`reportShards must be an integer from 1 to ${MAX_REPORT_SHARDS}, received ${shards}`)
  }

  // Plain names without hash tags: on a Redis Cluster the shards land on different slots, and so spread
  // over the masters instead of all loading one node.
  const reportStreams = Object.freeze(Array.from({ length: shards }, (_, i) => `${namespace}:reports:${i}`))
  const leasePrefix = `${namespace}:lease:`

  return Object.freeze({
    namespace,
    reportStreams,
    reportStreamFor: (agentId: string) => reportStreams[fnv1a32(agentId) % shards]!,
    deadLetterStream: `${namespace}:reports:dead`,
    consumerGroup: `${namespace}:aggregators`,
    registryChannel: `${namespace}:registry`,
    invalidationChannel: `${namespace}:invalidate`,
    registrySnapshotKey: `${namespace}:registry:snapshot`,
    leaseKey: (key: string) => `${leasePrefix}${sameSlotTag(key)}:${key}`,
    agentsKey: `${namespace}:agents`,
    windowCountersKey: (windowStart: number, shard: number) => `${namespace}:w:{${windowStart}:${shard}}`,
    keyStatsKey: (hash: string) => `${namespace}:stats:${hash}`,
  })
}

// FNV-1a (32-bit) over UTF-8 bytes: tiny, well spread for short ids, and reproducible in any language.
function fnv1a32(text: string): number {
  const bytes = Buffer.from(text, 'utf8')
  let hash = 0x811c9dc5
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193)
  return hash >>> 0
}
