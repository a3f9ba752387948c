import type { HeatsinkNames } from '@heatsink/protocol'
import type { Clock, WindowRecorderOptions } from '@heatsink/sketch'
import type { Codec } from '@heatsink/stampede'
import type { Cluster, Redis } from 'ioredis'
import type { z } from 'zod'
import type { agentOptionsSchema, l1Schema, sketchSchema, stampedeSchema } from './option-schema.js'

/** A structured logger (pino's shape): object first, short lowercase message. */
export interface AgentLogger {
  debug(object: object, message: string): void
  info(object: object, message: string): void
  warn(object: object, message: string): void
  error(object: object, message: string): void
}

/** How the L1 cache is sized and how long its entries live. */
export interface L1Options {
  /** Entries the LRU holds: 512 to 2048; default 1024. */
  maxEntries?: number
  /** An entry lives this fraction of the key's Redis TTL, read when it is filled: (0, 1]; default 0.2. */
  ttlFraction?: number
  /** Cap on an entry's lifetime, and the lifetime of keys without a TTL, in ms; default 5000. */
  maxTtlMs?: number
  /**
   * Bytes L1 may hold, estimated from the values and replies it keeps (at least 65,536; default 64 MiB): half
   * for replies of the command path, half for getOrLoad's values. A key whose replies would take more than an
   * eighth of its half is not cached (its reads go to Redis), so one large value cannot flush every other key.
   */
  maxBytes?: number
  /**
   * A fill (the read that puts a key in L1, which every read of the key waits on meanwhile) is abandoned when
   * no reply came within this many ms, and its reads go to Redis as without Heatsink: at least 10; default 500.
   * A fill whose tracking connection is lost is abandoned at once.
   */
  fillTimeoutMs?: number
}

/** How getOrLoad's loads are coordinated across agents (the stampede guard's timing). */
export interface StampedeOptions {
  /** Lease time to live in ms, extended every third of it while a load runs; default 5000. */
  leaseMs?: number
  /** A load holds its lease at most this long, so a hung loader frees the key; default 60,000 ms. */
  maxLeaseMs?: number
  /** Base of the jittered poll, base x (1 + random), while waiting on another agent's lease; default 50 ms. */
  pollMs?: number
  /** maxWaitMs of getOrLoad calls that give none; default 5000 ms. */
  maxWaitMs?: number
}

/** Options of createAgent. */
export interface AgentOptions<C extends Redis | Cluster = Redis | Cluster> {
  /** A Redis URL (the agent owns that client), or an ioredis Redis or Cluster (left open by close()). */
  redis: string | C
  /**
   * Heatsink's own Redis, apart from the application's: a redis://, rediss:// or redis+sentinel:// URL (the agent
   * owns that client; a Sentinel one moves to the new primary on `+switch-master`), or an ioredis Redis or Cluster
   * (left open by close(); a Cluster node as a URL is refused by ready()), whatever `redis` is. It carries the report
   * stream, the registry snapshot and tuning keys and the registry, invalidation, tuning and fill channels, so
   * that `redis` keeps only what tracking and getOrLoad need: the tracking subscription, the database marker
   * and getOrLoad's leases (docs/operations.md). Give it the aggregators' HEATSINK_CONTROL_REDIS_URL. Default:
   * `redis` carries everything.
   */
  control?: string | Redis | Cluster
  /** Heatsink namespace shared with the aggregator; default 'heatsink'. */
  namespace?: string
  /** Unique per process; default `<hostname>-<pid>-<random>`. */
  agentId?: string
  /** Report window, aligned to the epoch; default 1000. */
  windowMs?: number
  l1?: L1Options
  /** Time and timers for windows, L1 lifetimes and the periodic registry check; default the system clock. */
  clock?: Clock
  log?: AgentLogger
  /**
   * A key whose count in one window reaches this is sent at once in a partial report (the fast path), and is
   * always included in reports; default 100 (the sketch's report floor).
   */
  fastReportFloor?: number
  /** Most partial reports per window (one at a crossing, then one every quarter window); default 4. */
  maxPartialReportsPerWindow?: number
  /** How long a report may take before it counts as dropped; default 1000 ms. */
  reportTimeoutMs?: number
  /** How often the registry's stored version is compared with the agent's; default 2000 ms. */
  registryCheckMs?: number
  /** How long ready() waits before rejecting; default 10,000 ms. */
  readyTimeoutMs?: number
  /** How long close() may take in all, the last report included, whatever Redis does; default 1000 ms. */
  closeTimeoutMs?: number
  /**
   * replica_read: a replica takes a key's reads only while its data is at most this old (measured with this
   * agent's own heartbeat on the primary, written every 100 ms); default 500 ms, at least 200 ms.
   */
  maxReplicaLagMs?: number
  /** Sizing of the per-window sketch (width, depth, topK, capacity...). */
  sketch?: Omit<WindowRecorderOptions, 'onFloorCrossed' | 'windowStart' | 'reportFloor' | 'fastFloor'>
  /**
   * Turns getOrLoad's values into the text stored in Redis and back, for every key of this agent: agents sharing
   * keys must use the same one. Default JSON.
   */
  codec?: Codec
  /** Uniform in [0, 1): TTL jitter, XFetch draws and lease-poll jitter of getOrLoad; default Math.random. */
  random?: () => number
  stampede?: StampedeOptions
  /**
   * The key the aggregators sign registry events and snapshots with (their HEATSINK_REGISTRY_KEY): when set,
   * only messages with a valid MAC are applied, and the rest are counted in badMessages and forgedMessages.
   * At least 32 printable ASCII characters. Default: none, every well-formed message is applied.
   */
  registryKey?: string
}

/** Options after defaults and validation. */
export interface ResolvedOptions {
  readonly names: HeatsinkNames
  readonly agentId: string
  readonly windowMs: number
  readonly l1: Required<L1Options>
  readonly clock: Clock
  readonly log: AgentLogger
  readonly fastReportFloor: number
  readonly maxPartialReportsPerWindow: number
  readonly reportTimeoutMs: number
  readonly registryCheckMs: number
  readonly readyTimeoutMs: number
  readonly closeTimeoutMs: number
  readonly maxReplicaLagMs: number
  readonly sketch: Omit<WindowRecorderOptions, 'onFloorCrossed' | 'windowStart' | 'reportFloor' | 'fastFloor'>
  readonly codec: Codec
  readonly random: () => number
  readonly stampede: Required<StampedeOptions>
  /** null: registry messages are not authenticated. */
  readonly registryKey: string | null
}

// The schema names exactly the options the documented interfaces declare, no more and no fewer: a new option
// added to one and not the other fails the build here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Keys<T> = keyof NonNullable<T>
const schemaMatchesInterfaces: [
  Same<Keys<z.infer<typeof agentOptionsSchema>>, Keys<AgentOptions>>,
  Same<Keys<z.infer<typeof l1Schema>>, Keys<AgentOptions['l1']>>,
  Same<Keys<z.infer<typeof stampedeSchema>>, Keys<AgentOptions['stampede']>>,
  Same<Keys<z.infer<typeof sketchSchema>>, Keys<AgentOptions['sketch']>>,
] = [true, true, true, true]
void schemaMatchesInterfaces
