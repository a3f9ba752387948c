import { hostname } from 'node:os'
import { resolve } from 'node:path'
import { createNames, DEFAULT_NAMESPACE, registryKeyProblem } from '@heatsink/protocol'
import { z } from 'zod'
import { DEFAULT_MITIGATION_POLICY } from './detection/mitigation-policy.js'
import { ConfigError } from './errors.js'

/** Where the API listens when HEATSINK_API_TOKEN is unset: unauthenticated writes must not leave the host. */
export const LOOPBACK_HOST = '127.0.0.1'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

// Every variable is read as text; an empty value counts as unset, as shells and compose files often write them.
const text = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()))

/** A variable that must parse as a number accepted by `accept`; `expected` completes "expected ...". */
function numeric(expected: string, accept: (n: number) => boolean) {
  return text.transform((raw, ctx) => {
    if (raw === undefined) return undefined
    const value = Number(raw)
    if (!Number.isFinite(value) || !accept(value)) {
      ctx.addIssue({ code: 'custom', message: `expected ${expected}, got '${raw}'` })
      return z.NEVER
    }
    return value
  })
}

function matching(expected: string, accept: (raw: string) => boolean) {
  return text.refine((raw) => raw === undefined || accept(raw), {
    error: (issue) => `expected ${expected}, got '${String(issue.input)}'`,
  })
}

const positiveNumber = numeric('a positive number', (n) => n > 0)
const positiveInteger = numeric('a positive integer', (n) => Number.isInteger(n) && n > 0)
const nonNegativeInteger = numeric('a non-negative integer', (n) => Number.isInteger(n) && n >= 0)
const share = numeric('a number from 0 to 1', (n) => n >= 0 && n <= 1)

// The token travels as one word after `Bearer ` in a header, which carries printable ASCII: a token with
// whitespace or other characters would be accepted here and then never match. The message never echoes it.
const apiToken = text.superRefine((raw, ctx) => {
  if (raw === undefined || /^[\x21-\x7e]+$/.test(raw)) return
  const what = /\s/.test(raw) ? 'whitespace' : 'a character outside printable ASCII'
  ctx.addIssue({
    code: 'custom',
    message: `expected printable ASCII without spaces (it is sent as one word after 'Bearer '), got a value containing ${what}`,
  })
})

// The key agents check registry messages with; the message never echoes it.
const registryKey = text.superRefine((raw, ctx) => {
  const problem = raw === undefined ? undefined : registryKeyProblem(raw)
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
})

function isNamespace(raw: string): boolean {
  try {
    createNames(raw)
    return true
  } catch {
    return false
  }
}

const Environment = z.object({
  PORT: numeric('an integer port from 0 to 65535', (n) => Number.isInteger(n) && n >= 0 && n <= 65_535),
  HOST: text,
  REDIS_URL: matching('a redis:// or rediss:// URL', (raw) => /^rediss?:\/\//.test(raw)),
  DATABASE_URL: matching('a postgres:// or postgresql:// URL', (raw) => /^postgres(ql)?:\/\//.test(raw)),
  HEATSINK_DATA_DIR: text,
  HEATSINK_NAMESPACE: matching("1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'", isNamespace),
  HEATSINK_API_TOKEN: apiToken,
  HEATSINK_REGISTRY_KEY: registryKey,
  HEATSINK_HOT_RPS: positiveNumber,
  HEATSINK_COOL_RPS: positiveNumber,
  HEATSINK_COOL_SECONDS: positiveNumber,
  HEATSINK_WINDOW_MS: positiveInteger,
  HEATSINK_COUNTER_SHARDS: numeric(
    'an integer from 1 to 1024',
    (n) => Number.isInteger(n) && n >= 1 && n <= 1024,
  ),
  HEATSINK_REPLICA_ID: matching('1 to 128 characters', (raw) => raw.length <= 128),
  HEATSINK_WRITE_SHARE: share,
  HEATSINK_MISS_SHARE: share,
  HEATSINK_SPLIT_WRITE_CAPACITY: positiveNumber,
  HEATSINK_SPLIT_MAX: numeric(
    'a power of two from 2 to 1024',
    (n) => Number.isInteger(n) && n >= 2 && n <= 1024 && (n & (n - 1)) === 0,
  ),
  HEATSINK_MAX_REPORT_AGE_MS: positiveInteger,
  HEATSINK_SHUTDOWN_TIMEOUT_MS: positiveInteger,
  HEATSINK_MAX_CLOCK_SKEW_MS: nonNegativeInteger,
  HEATSINK_INGEST_STALL_MS: positiveInteger,
  LOG_LEVEL: matching(`one of ${LOG_LEVELS.join(', ')}`, (raw) =>
    (LOG_LEVELS as readonly string[]).includes(raw),
  ),
})

/** Builds the validated configuration from the environment, filling in defaults. */
function configSchema(cwd: string) {
  return Environment.superRefine((env, ctx) => {
    const hot = env.HEATSINK_HOT_RPS ?? 1000
    if (env.HEATSINK_COOL_RPS !== undefined && env.HEATSINK_COOL_RPS >= hot) {
      ctx.addIssue({
        code: 'custom',
        path: ['HEATSINK_COOL_RPS'],
        message: `expected a number below HEATSINK_HOT_RPS (${hot}), got '${env.HEATSINK_COOL_RPS}'`,
      })
    }
  }).transform((env) => {
    const apiToken = env.HEATSINK_API_TOKEN ?? null
    const hotRps = env.HEATSINK_HOT_RPS ?? 1000
    return {
      port: env.PORT ?? 8080,
      // Without a token anyone who reaches the port could promote and demote keys, so loopback is forced.
      host: apiToken === null ? LOOPBACK_HOST : (env.HOST ?? '0.0.0.0'),
      /** HOST as given but overridden because no API token is set; null when nothing was overridden. */
      ignoredHost:
        apiToken === null && env.HOST !== undefined && env.HOST !== LOOPBACK_HOST ? env.HOST : null,
      redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      /** null: run on the embedded PGlite in dataDir. */
      databaseUrl: env.DATABASE_URL ?? null,
      dataDir: resolve(cwd, env.HEATSINK_DATA_DIR ?? '.heatsink/pglite'),
      namespace: env.HEATSINK_NAMESPACE ?? DEFAULT_NAMESPACE,
      apiToken,
      /** Signs every registry event and snapshot published (HMAC-SHA-256); null: published unsigned. */
      registryKey: env.HEATSINK_REGISTRY_KEY ?? null,
      hotRps,
      coolRps: env.HEATSINK_COOL_RPS ?? hotRps / 2,
      coolSeconds: env.HEATSINK_COOL_SECONDS ?? 30,
      windowMs: env.HEATSINK_WINDOW_MS ?? 1000,
      counterShards: env.HEATSINK_COUNTER_SHARDS ?? 1,
      replicaId: env.HEATSINK_REPLICA_ID ?? `${hostname()}-${process.pid}`,
      /** How detection picks a mitigation (see detection/mitigation-policy.ts). */
      policy: {
        writeShare: env.HEATSINK_WRITE_SHARE ?? DEFAULT_MITIGATION_POLICY.writeShare,
        missShare: env.HEATSINK_MISS_SHARE ?? DEFAULT_MITIGATION_POLICY.missShare,
        splitWriteCapacity: env.HEATSINK_SPLIT_WRITE_CAPACITY ?? DEFAULT_MITIGATION_POLICY.splitWriteCapacity,
        maxSplitFactor: env.HEATSINK_SPLIT_MAX ?? DEFAULT_MITIGATION_POLICY.maxSplitFactor,
      },
      maxReportAgeMs: env.HEATSINK_MAX_REPORT_AGE_MS ?? 30_000,
      /** From SIGTERM to exit, whatever clients do; within Kubernetes' default 30 s grace period. */
      shutdownTimeoutMs: env.HEATSINK_SHUTDOWN_TIMEOUT_MS ?? 10_000,
      /** How far ahead of this replica's clock a report's window may start before it is refused. */
      maxClockSkewMs: env.HEATSINK_MAX_CLOCK_SKEW_MS ?? 5000,
      /** A report stream read loop failing this long makes /readyz fail; three times the 1 s blocking read. */
      ingestStallMs: env.HEATSINK_INGEST_STALL_MS ?? 3000,
      logLevel: env.LOG_LEVEL ?? 'info',
    }
  })
}

/** The aggregator's configuration, as loadConfig returns it. */
export type Config = z.output<ReturnType<typeof configSchema>>

/**
 * Reads and checks the configuration from `env` (normally process.env); relative paths resolve against `cwd`.
 * Throws ConfigError listing every bad value, one line each: `HEATSINK_HOT_RPS: expected a positive number, got 'abc'`.
 */
export function loadConfig(env: Record<string, string | undefined>, cwd: string = process.cwd()): Config {
  const result = configSchema(cwd).safeParse(env)
  if (result.success) return result.data
  throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`))
}
