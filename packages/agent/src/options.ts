import { hostname } from 'node:os'
import {
  AgentId,
  createNames,
  DEFAULT_NAMESPACE,
  type HeatsinkNames,
  registryKeyProblem,
} from '@heatsink/protocol'
import {
  type Clock,
  DEFAULT_REPORT_FLOOR,
  DEFAULT_WINDOW_MS,
  systemClock,
  type WindowRecorderOptions,
} from '@heatsink/sketch'
import { type Codec, jsonCodec } from '@heatsink/stampede'
import type { Cluster, Redis } from 'ioredis'
import { InvalidAgentOptionError } from './errors.js'
import { checkShape } from './options/check-shape.js'
import { agentOptionsSchema, heatsinkOptionsSchema } from './options/option-schema.js'

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
   * Heatsink's own Redis, apart from the application's: a redis:// or rediss:// URL (the agent owns that client)
   * or an ioredis Redis (left open by close()); one standalone Redis, whatever `redis` is. It carries the report
   * stream, the registry snapshot and tuning keys and the registry, invalidation, tuning and fill channels, so
   * that `redis` keeps only what tracking and getOrLoad need: the tracking subscription, the database marker
   * and getOrLoad's leases (docs/operations.md). Give it the aggregators' HEATSINK_CONTROL_REDIS_URL. Default:
   * `redis` carries everything.
   */
  control?: string | Redis
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

export const L1_MIN_ENTRIES = 512
export const L1_MAX_ENTRIES = 2048
export const DEFAULT_L1_ENTRIES = 1024
export const DEFAULT_TTL_FRACTION = 0.2
export const DEFAULT_MAX_TTL_MS = 5000
export const L1_MIN_BYTES = 65_536
export const DEFAULT_L1_BYTES = 64 * 1024 * 1024
// A healthy Redis answers a fill (GET and PTTL) in well under a millisecond and a busy one in tens: half a second
// abandons only a connection that stalled, not one that is slow, so a loaded Redis never sees a hot key's waiters
// sent at it all at once; and it is the most a read can lose to a tracking connection that stalls without closing.
export const DEFAULT_FILL_TIMEOUT_MS = 500

const noop = () => {}
/** A logger that drops everything. */
export const silentLogger: AgentLogger = { debug: noop, info: noop, warn: noop, error: noop }

/**
 * Applies defaults and checks every option, throwing InvalidAgentOptionError naming the first bad one (an
 * UnknownAgentOptionError, with the nearest valid name, for an option the agent does not know).
 */
export function resolveOptions(options: AgentOptions): ResolvedOptions {
  checkShape(agentOptionsSchema, options, '')
  return resolveSettings(options, '')
}

/**
 * Checks the front door's `heatsink: {...}` options as createAgent would, naming a bad option by its full path
 * (`heatsink.l1.maxEntries`): they are checked for every client, also for those that share an agent made
 * from an earlier client's options.
 */
export function checkHeatsinkOptions(options: unknown): asserts options is Omit<AgentOptions, 'redis'> {
  checkShape(heatsinkOptionsSchema, options, 'heatsink')
  resolveSettings(options as Omit<AgentOptions, 'redis'>, 'heatsink')
}

function resolveSettings(options: Omit<AgentOptions, 'redis'>, at: string): ResolvedOptions {
  const named = (option: string) => (at === '' ? option : `${at}.${option}`)
  const integer = (option: string, value: number, min: number): number => {
    if (!Number.isInteger(value) || value < min) {
      throw new InvalidAgentOptionError(named(option), `must be an integer of at least ${min}, got ${value}`)
    }
    return value
  }
  let names: HeatsinkNames
  try {
    names = createNames(options.namespace ?? DEFAULT_NAMESPACE)
  } catch (error) {
    throw new InvalidAgentOptionError(named('namespace'), (error as Error).message)
  }
  const agentId = options.agentId ?? defaultAgentId()
  if (!AgentId.safeParse(agentId).success) {
    throw new InvalidAgentOptionError(
      named('agentId'),
      `must be 1 to 128 characters, got ${JSON.stringify(agentId)}`,
    )
  }
  const l1 = options.l1 ?? {}
  const maxEntries = l1.maxEntries ?? DEFAULT_L1_ENTRIES
  if (!Number.isInteger(maxEntries) || maxEntries < L1_MIN_ENTRIES || maxEntries > L1_MAX_ENTRIES) {
    throw new InvalidAgentOptionError(
      named('l1.maxEntries'),
      `must be an integer from ${L1_MIN_ENTRIES} to ${L1_MAX_ENTRIES}, got ${maxEntries}`,
    )
  }
  const stampede = options.stampede ?? {}
  const ttlFraction = l1.ttlFraction ?? DEFAULT_TTL_FRACTION
  if (!(ttlFraction > 0 && ttlFraction <= 1)) {
    throw new InvalidAgentOptionError(
      named('l1.ttlFraction'),
      `must be above 0 and at most 1, got ${ttlFraction}`,
    )
  }
  if (typeof options.control === 'string' && !CONTROL_URL.test(options.control)) {
    throw new InvalidAgentOptionError(
      named('control'),
      `must be a redis:// or rediss:// URL or an ioredis Redis client, got a string starting ${JSON.stringify(urlScheme(options.control))}`,
    )
  }
  const registryKey = options.registryKey ?? null
  const keyProblem = registryKey === null ? undefined : registryKeyProblem(registryKey)
  if (keyProblem !== undefined) throw new InvalidAgentOptionError(named('registryKey'), keyProblem)
  return {
    names,
    agentId,
    windowMs: integer('windowMs', options.windowMs ?? DEFAULT_WINDOW_MS, 10),
    l1: {
      maxEntries,
      ttlFraction,
      maxTtlMs: integer('l1.maxTtlMs', l1.maxTtlMs ?? DEFAULT_MAX_TTL_MS, 1),
      maxBytes: integer('l1.maxBytes', l1.maxBytes ?? DEFAULT_L1_BYTES, L1_MIN_BYTES),
      fillTimeoutMs: integer('l1.fillTimeoutMs', l1.fillTimeoutMs ?? DEFAULT_FILL_TIMEOUT_MS, 10),
    },
    clock: options.clock ?? systemClock,
    log: options.log ?? silentLogger,
    fastReportFloor: integer('fastReportFloor', options.fastReportFloor ?? DEFAULT_REPORT_FLOOR, 1),
    maxPartialReportsPerWindow: integer(
      'maxPartialReportsPerWindow',
      options.maxPartialReportsPerWindow ?? 8,
      0,
    ),
    reportTimeoutMs: integer('reportTimeoutMs', options.reportTimeoutMs ?? 1000, 1),
    registryCheckMs: integer('registryCheckMs', options.registryCheckMs ?? 2000, 10),
    readyTimeoutMs: integer('readyTimeoutMs', options.readyTimeoutMs ?? 10_000, 1),
    closeTimeoutMs: integer('closeTimeoutMs', options.closeTimeoutMs ?? 1000, 0),
    // Below two heartbeat periods a healthy replica would keep dropping out between polls.
    maxReplicaLagMs: integer('maxReplicaLagMs', options.maxReplicaLagMs ?? DEFAULT_MAX_REPLICA_LAG_MS, 200),
    sketch: options.sketch ?? {},
    codec: options.codec ?? jsonCodec,
    random: options.random ?? Math.random,
    stampede: {
      leaseMs: integer('stampede.leaseMs', stampede.leaseMs ?? 5000, 1),
      maxLeaseMs: integer('stampede.maxLeaseMs', stampede.maxLeaseMs ?? 60_000, 1),
      pollMs: integer('stampede.pollMs', stampede.pollMs ?? 50, 1),
      maxWaitMs: integer('stampede.maxWaitMs', stampede.maxWaitMs ?? 5000, 1),
    },
    registryKey,
  }
}

// A host must follow the scheme; the rest (credentials, port, database) is ioredis's to read.
const CONTROL_URL = /^rediss?:\/\/[^/]/

// What a bad URL is shown as: its scheme only, since the rest may hold a password.
function urlScheme(url: string): string {
  const colon = url.indexOf(':')
  return colon < 0 ? url.slice(0, 12) : url.slice(0, colon + 1)
}

function defaultAgentId(): string {
  return `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
}

/** replica_read's bound on a replica's lag when none is given. */
export const DEFAULT_MAX_REPLICA_LAG_MS = 500
