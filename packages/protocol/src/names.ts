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
// What slotTag() produces: short base-36 strings.
const SLOT_TAG_PATTERN = /^[0-9a-z]{1,8}$/

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
  /** Pub/sub channel carrying encoded `DetectionTuning` messages. */
  readonly tuningChannel: string
  /** String holding the latest encoded `DetectionTuning`, read by agents when they (re)subscribe. */
  readonly tuningKey: string
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
  /** The latest sample of every Redis node's load (JSON string, short TTL), written by the metrics reporter. */
  readonly nodesLatestKey: string
  /** The recent node samples, newest first (capped list of JSON), for the node charts. */
  readonly nodesHistoryKey: string
  /** Hash: hot key -> its node's ops/s before the key's promotion (JSON). */
  readonly nodesBeforeKey: string
  readonly agentsKey: string
  /**
   * A random token in each database whose keys an agent's L1 holds, in the application's own Redis: SWAPDB
   * sends no tracking invalidation, so agents watch it change (see DatabaseMarker in @heatsink/agent).
   */
  readonly databaseMarkerKey: string
  /**
   * The aggregator's per-window counters for one counter shard, a hash of plain integers: each agent's largest
   * reported count, writes and misses per key, and the cluster-wide sums (field layout in the aggregator's
   * applyReport-1.lua). The hash tag keeps one window-shard in one slot, so one script updates it atomically,
   * while different shards and windows spread over a Cluster.
   */
  windowCountersKey(windowStart: number, shard: number): string
  /**
   * The heartbeat one agent writes on one primary (a string `<sequence> <time ms>`), read on that primary's
   * replicas to measure their replication lag for replica_read. `tag` puts it on a Cluster master's slots (any
   * short base-36 tag; standalone uses '0').
   */
  heartbeatKey(agentId: string, tag: string): string
  /** Per-agent statistics of one registered key (hash: agent id -> encoded HotKeyStats with its window). */
  keyStatsKey(keyHash: string): string
  /** Per-agent error samples of one key (hash: agent id -> [estimate, exact, windowStart] as JSON). */
  sketchSampleKey(keyHash: string): string
  /**
   * Shard `index` of a split key spread over `splitFactor` shards (@heatsink/split). `tag` is a `slotTag(slot)`:
   * the only hash tag in the name, so the shard lands on the slot the splitter chose, whatever braces `key`
   * holds. The split factor is part of the name, so two layouts of one key never share a shard.
   */
  splitShardKey(key: string, splitFactor: number, index: number, tag: string): string
  /** The gate of that shard, a string in the shard's slot: whether the shard takes writes, and where they go if not. */
  splitGateKey(key: string, splitFactor: number, index: number, tag: string): string
  /**
   * Held while a split key is folded, resharded or reconciled (one worker per key); same slot as `key`, and
   * scripts on the key treat its existence as "a fold is running".
   */
  splitLeaseKey(key: string): string
  /** Journal (a string) of the counter moves already added to `key`, for exactly-once folds; same slot as `key`. */
  splitJournalKey(key: string): string
  /**
   * The layouts of `key` whose closed gates send writes to another layout (a string ',<from>><to>,...'), kept as
   * long as such gates; same slot as `key`, so a counter read learns in its one MGET whether it must read gates.
   */
  splitRoutesKey(key: string): string
  /** Set of members written or removed on `key` through the splitter while a fold runs; same slot as `key`. */
  splitTouchedKey(key: string): string
  /** Hash holding the write stamp of `key`'s value, for split copies (last write wins); same slot as `key`. */
  splitStampKey(key: string): string
  /**
   * The registry version under which a data plane folded `key` for a command its split cannot answer (a string):
   * no agent reopens the layout while the key's registry entry keeps that version; same slot as `key`.
   */
  splitHeldKey(key: string): string
  /** Lease of the split reconciler, so that one agent at a time rebalances. */
  readonly splitReconcilerLeaseKey: string
  /** Sorted set of recently folded split layouts (`<splitFactor>:<key>`, score: until when to re-check them). */
  readonly splitFoldedKey: string
  /** Lease of the aggregator replica that exports the cluster-wide gauges (registry size, stream backlog). */
  readonly metricsReporterLeaseKey: string
  /** Capped stream of the miss storms the aggregator raised (encoded MissStorm), newest last. */
  readonly missStormsKey: string
  /** Set while a key's miss storm lasts, so a storm raises one event however many replicas see it. */
  missStormMarkerKey(keyHash: string): string
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
    tuningChannel: `${namespace}:tuning`,
    tuningKey: `${namespace}:tuning:latest`,
    registrySnapshotKey: `${namespace}:registry:snapshot`,
    leaseKey: (key: string) => `${leasePrefix}${sameSlotTag(key)}:${key}`,
    nodesLatestKey: `${namespace}:nodes:latest`,
    nodesHistoryKey: `${namespace}:nodes:history`,
    nodesBeforeKey: `${namespace}:nodes:before`,
    agentsKey: `${namespace}:agents`,
    databaseMarkerKey: `${namespace}:db-marker`,
    windowCountersKey: (windowStart: number, shard: number) => `${namespace}:w:{${windowStart}:${shard}}`,
    heartbeatKey: (agentId: string, tag: string) => {
      if (!SLOT_TAG_PATTERN.test(tag)) throw new RangeError(`invalid slot tag ${JSON.stringify(tag)}`)
      return `${namespace}:heartbeat:{${tag}}:${agentId}`
    },
    keyStatsKey: (hash: string) => `${namespace}:stats:${hash}`,
    sketchSampleKey: (hash: string) => `${namespace}:sketch:${hash}`,
    splitShardKey: (key: string, splitFactor: number, index: number, tag: string) =>
      `${splitShardPrefix(namespace, splitFactor, index, tag)}:d:${key}`,
    splitGateKey: (key: string, splitFactor: number, index: number, tag: string) =>
      `${splitShardPrefix(namespace, splitFactor, index, tag)}:g:${key}`,
    splitLeaseKey: (key: string) => `${namespace}:split-lease:${sameSlotTag(key)}:${key}`,
    splitJournalKey: (key: string) => `${namespace}:split-journal:${sameSlotTag(key)}:${key}`,
    splitRoutesKey: (key: string) => `${namespace}:split-routes:${sameSlotTag(key)}:${key}`,
    splitTouchedKey: (key: string) => `${namespace}:split-touched:${sameSlotTag(key)}:${key}`,
    splitStampKey: (key: string) => `${namespace}:split-stamp:${sameSlotTag(key)}:${key}`,
    splitHeldKey: (key: string) => `${namespace}:split-held:${sameSlotTag(key)}:${key}`,
    splitReconcilerLeaseKey: `${namespace}:split-reconciler`,
    splitFoldedKey: `${namespace}:split-folded`,
    metricsReporterLeaseKey: `${namespace}:metrics-reporter`,
    missStormsKey: `${namespace}:miss-storms`,
    missStormMarkerKey: (hash: string) => `${namespace}:miss-storm:${hash}`,
  })
}

/**
 * What every name Heatsink builds under `<namespace>:` continues with: `families` start a whole family of names
 * (report streams, leases, counters, split shards...), `single` are names of their own (channels, leases of one
 * worker). Kept beside createNames so that a new name is listed where it is made (names.test.ts checks that each
 * is covered); `filled` is the stampede guard's channel. A front door refuses its clients every such name, and no
 * other: an application's own `<namespace>:user:1` stays its own.
 */
export const HEATSINK_NAME_PARTS: {
  readonly families: readonly string[]
  readonly single: readonly string[]
} = Object.freeze({
  families: [
    'reports:',
    'lease:',
    'w:{',
    'stats:',
    'sketch:',
    'registry:',
    'tuning:',
    'split:{',
    'split-lease:',
    'split-journal:',
    'split-routes:',
    'split-touched:',
    'split-stamp:',
    'split-held:',
    'heartbeat:{',
    'miss-storm:',
    'nodes:',
  ],
  single: [
    'registry',
    'invalidate',
    'tuning',
    'agents',
    'aggregators',
    'filled',
    'split-reconciler',
    'split-folded',
    'metrics-reporter',
    'db-marker',
    'miss-storms',
  ],
})

// The role (d: data, g: gate) follows the position, so no key can make one shard's name equal another's.
function splitShardPrefix(namespace: string, splitFactor: number, index: number, tag: string): string {
  if (!Number.isInteger(splitFactor) || splitFactor < 2) {
    throw new RangeError(`splitFactor must be an integer of at least 2, received ${splitFactor}`)
  }
  if (!Number.isInteger(index) || index < 0 || index >= splitFactor) {
    throw new RangeError(`shard index must be an integer from 0 to ${splitFactor - 1}, received ${index}`)
  }
  if (!SLOT_TAG_PATTERN.test(tag)) throw new RangeError(`invalid slot tag ${JSON.stringify(tag)}`)
  return `${namespace}:split:{${tag}}:${splitFactor}:${index}`
}

// FNV-1a (32-bit) over UTF-8 bytes: tiny, well spread for short ids, and reproducible in any language.
function fnv1a32(text: string): number {
  const bytes = Buffer.from(text, 'utf8')
  let hash = 0x811c9dc5
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193)
  return hash >>> 0
}
