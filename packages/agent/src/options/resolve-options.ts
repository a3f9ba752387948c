import { hostname } from 'node:os'
import {
  AgentId,
  createNames,
  DEFAULT_NAMESPACE,
  type HeatsinkNames,
  isSentinelUrl,
  redisUrlProblem,
  registryKeyProblem,
} from '@heatsink/protocol'
import { DEFAULT_REPORT_FLOOR, DEFAULT_WINDOW_MS, systemClock } from '@heatsink/sketch'
import { jsonCodec } from '@heatsink/stampede'
import { InvalidAgentOptionError } from '../errors.js'
import type { AgentLogger, AgentOptions, ResolvedOptions } from './agent-options.js'
import { checkShape } from './check-shape.js'
import { agentOptionsSchema, heatsinkOptionsSchema } from './option-schema.js'

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
  if (typeof options.control === 'string' && isSentinelUrl(options.control)) {
    const problem = redisUrlProblem(options.control)
    if (problem !== undefined) throw new InvalidAgentOptionError(named('control'), problem)
  } else if (typeof options.control === 'string' && !CONTROL_URL.test(options.control)) {
    throw new InvalidAgentOptionError(
      named('control'),
      `must be a redis://, rediss:// or redis+sentinel:// URL or an ioredis Redis client, got a string starting ${JSON.stringify(urlScheme(options.control))}`,
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
