import { hostname } from 'node:os'
import { resolve } from 'node:path'
import {
  DEFAULT_NAMESPACE,
  environmentProblems,
  envLogLevel,
  envMatching,
  envNamespace,
  envNumber,
  envPort,
  envPositiveInteger,
  envRedisUrl,
  envRegistryKey,
  envText,
  isSentinelUrl,
} from '@heatsink/protocol'
import type { Logger } from 'pino'
import { z } from 'zod'
import { DEFAULT_CONTENTION } from './contention/write-contention.js'
import { DEFAULT_MITIGATION_POLICY } from './detection/mitigation-policy.js'
import { ConfigError } from './errors.js'
import { DEFAULT_MISS_STORM } from './storms/miss-storm-watch.js'

/** Where the API listens when HEATSINK_API_TOKEN is unset: unauthenticated writes must not leave the host. */
export const LOOPBACK_HOST = '127.0.0.1'

const positiveNumber = envNumber('a positive number', (n) => n > 0)
const nonNegativeInteger = envNumber('a non-negative integer', (n) => Number.isInteger(n) && n >= 0)
const envBoolean = envMatching("'true' or 'false'", (raw) => raw === 'true' || raw === 'false')
const share = envNumber('a number from 0 to 1', (n) => n >= 0 && n <= 1)
// A number of windows a rule looks back over.
const windowCount = envNumber('an integer from 1 to 50', (n) => Number.isInteger(n) && n >= 1 && n <= 50)

// The token travels as one word after `Bearer ` in a header, which carries printable ASCII: a token with
// whitespace or other characters would be accepted here and then never match. The message never echoes it.
const apiToken = envText.superRefine((raw, ctx) => {
  if (raw === undefined || /^[\x21-\x7e]+$/.test(raw)) return
  const what = /\s/.test(raw) ? 'whitespace' : 'a character outside printable ASCII'
  ctx.addIssue({
    code: 'custom',
    message: `expected printable ASCII without spaces (it is sent as one word after 'Bearer '), got a value containing ${what}`,
  })
})

const Environment = z.object({
  PORT: envPort,
  HOST: envText,
  REDIS_URL: envRedisUrl,
  HEATSINK_CONTROL_REDIS_URL: envRedisUrl,
  HEATSINK_SENTINEL_PASSWORD: envText,
  HEATSINK_REDIS_CLUSTER: envBoolean,
  HEATSINK_CONTROL_REDIS_CLUSTER: envBoolean,
  DATABASE_URL: envMatching('a postgres:// or postgresql:// URL', (raw) => /^postgres(ql)?:\/\//.test(raw)),
  HEATSINK_DATA_DIR: envText,
  HEATSINK_NAMESPACE: envNamespace,
  HEATSINK_API_TOKEN: apiToken,
  HEATSINK_REGISTRY_KEY: envRegistryKey,
  HEATSINK_HOT_RPS: positiveNumber,
  HEATSINK_COOL_RPS: positiveNumber,
  HEATSINK_COOL_SECONDS: positiveNumber,
  HEATSINK_WINDOW_MS: envPositiveInteger,
  HEATSINK_COUNTER_SHARDS: envNumber(
    'an integer from 1 to 1024',
    (n) => Number.isInteger(n) && n >= 1 && n <= 1024,
  ),
  HEATSINK_REPLICA_ID: envMatching('1 to 128 characters', (raw) => raw.length <= 128),
  HEATSINK_WRITE_SHARE: share,
  HEATSINK_MISS_SHARE: share,
  HEATSINK_REPLICA_READ_SHARE: share,
  HEATSINK_SPLIT_WRITE_CAPACITY: positiveNumber,
  HEATSINK_SPLIT_MAX: envNumber(
    'a power of two from 2 to 1024',
    (n) => Number.isInteger(n) && n >= 2 && n <= 1024 && (n & (n - 1)) === 0,
  ),
  HEATSINK_MAX_REPORT_AGE_MS: envPositiveInteger,
  HEATSINK_SHUTDOWN_TIMEOUT_MS: envPositiveInteger,
  HEATSINK_MAX_CLOCK_SKEW_MS: nonNegativeInteger,
  HEATSINK_INGEST_STALL_MS: envPositiveInteger,
  HEATSINK_MISS_STORM_MIN_RPS: positiveNumber,
  HEATSINK_MISS_STORM_FACTOR: envNumber('a number of at least 1', (n) => n >= 1),
  HEATSINK_MISS_STORM_BASELINE_WINDOWS: windowCount,
  HEATSINK_CONTENTION_ABORTS_RPS: positiveNumber,
  HEATSINK_CONTENTION_WINDOWS: windowCount,
  HEATSINK_NODE_SAMPLE_MS: nonNegativeInteger,
  LOG_LEVEL: envLogLevel,
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
    // SELECT fails on a Cluster node, so a database in the URL would make every connection fail, later and less clearly.
    const database =
      env.REDIS_URL === undefined ? undefined : /^rediss?:\/\/[^/]*\/(\d+)/.exec(env.REDIS_URL)?.[1]
    if (
      env.HEATSINK_REDIS_CLUSTER === 'true' &&
      env.REDIS_URL !== undefined &&
      isSentinelUrl(env.REDIS_URL)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['REDIS_URL'],
        message:
          'expected a redis:// or rediss:// node with HEATSINK_REDIS_CLUSTER=true (a Cluster has no Sentinel)',
      })
    }
    if (
      env.HEATSINK_CONTROL_REDIS_CLUSTER === 'true' &&
      (env.HEATSINK_CONTROL_REDIS_URL === undefined || isSentinelUrl(env.HEATSINK_CONTROL_REDIS_URL))
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['HEATSINK_CONTROL_REDIS_CLUSTER'],
        message: 'expected HEATSINK_CONTROL_REDIS_URL to name a redis:// or rediss:// node of the Cluster',
      })
    }
    if (env.HEATSINK_REDIS_CLUSTER === 'true' && database !== undefined && Number(database) !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['REDIS_URL'],
        message: `expected database 0 with HEATSINK_REDIS_CLUSTER=true (a Redis Cluster has no other), got '${env.REDIS_URL}'`,
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
      // The aggregator touches only Heatsink's own state (report streams, counters, registry snapshot, channels),
      // so with a control Redis that is the one it uses; agents and proxies are given the same URL.
      redisUrl: env.HEATSINK_CONTROL_REDIS_URL ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      /** The variable redisUrl came from, for errors about it. */
      redisUrlVariable:
        env.HEATSINK_CONTROL_REDIS_URL === undefined ? 'REDIS_URL' : 'HEATSINK_CONTROL_REDIS_URL',
      /** Sentinel's own password for a redis+sentinel:// URL without `sentinelPassword`; never logged. */
      sentinelPassword: env.HEATSINK_SENTINEL_PASSWORD ?? null,
      /**
       * Whether redisUrl names one node of a Redis Cluster: HEATSINK_REDIS_CLUSTER describes REDIS_URL,
       * HEATSINK_CONTROL_REDIS_CLUSTER the control Redis.
       */
      redisCluster:
        env.HEATSINK_CONTROL_REDIS_URL === undefined
          ? env.HEATSINK_REDIS_CLUSTER === 'true'
          : env.HEATSINK_CONTROL_REDIS_CLUSTER === 'true',
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
        replicaReadShare: env.HEATSINK_REPLICA_READ_SHARE ?? DEFAULT_MITIGATION_POLICY.replicaReadShare,
      },
      maxReportAgeMs: env.HEATSINK_MAX_REPORT_AGE_MS ?? 30_000,
      /** From SIGTERM to exit, whatever clients do; within Kubernetes' default 30 s grace period. */
      shutdownTimeoutMs: env.HEATSINK_SHUTDOWN_TIMEOUT_MS ?? 10_000,
      /** How far ahead of this replica's clock a report's window may start before it is refused. */
      maxClockSkewMs: env.HEATSINK_MAX_CLOCK_SKEW_MS ?? 5000,
      /** A report stream read loop failing this long makes /readyz fail; three times the 1 s blocking read. */
      ingestStallMs: env.HEATSINK_INGEST_STALL_MS ?? 3000,
      /** When a key's misses are a storm (see storms/miss-storm-watch.ts for the defaults' reasons). */
      missStorm: {
        minPerSecond: env.HEATSINK_MISS_STORM_MIN_RPS ?? DEFAULT_MISS_STORM.minPerSecond,
        factor: env.HEATSINK_MISS_STORM_FACTOR ?? DEFAULT_MISS_STORM.factor,
        baselineWindows: env.HEATSINK_MISS_STORM_BASELINE_WINDOWS ?? DEFAULT_MISS_STORM.baselineWindows,
      },
      /** When a key's write contention is sustained (see contention/write-contention.ts for the defaults' reasons). */
      contention: {
        minPerSecond: env.HEATSINK_CONTENTION_ABORTS_RPS ?? DEFAULT_CONTENTION.minPerSecond,
        windows: env.HEATSINK_CONTENTION_WINDOWS ?? DEFAULT_CONTENTION.windows,
      },
      /**
       * Whether the aggregator's Redis holds the application's keys too, so it can name the node owning a key;
       * false with a control Redis apart from them.
       */
      sharesDataRedis: env.HEATSINK_CONTROL_REDIS_URL === undefined,
      logLevel: env.LOG_LEVEL ?? 'info',
      /**
       * The Redis whose nodes the node view samples: REDIS_URL (the one agents use; HEATSINK_REDIS_CLUSTER
       * describes it), else the control Redis.
       */
      nodeRedis: {
        redisUrl: env.REDIS_URL ?? env.HEATSINK_CONTROL_REDIS_URL ?? 'redis://127.0.0.1:6379',
        redisUrlVariable:
          env.REDIS_URL === undefined && env.HEATSINK_CONTROL_REDIS_URL !== undefined
            ? 'HEATSINK_CONTROL_REDIS_URL'
            : 'REDIS_URL',
        redisCluster:
          env.REDIS_URL === undefined && env.HEATSINK_CONTROL_REDIS_URL !== undefined
            ? env.HEATSINK_CONTROL_REDIS_CLUSTER === 'true'
            : env.HEATSINK_REDIS_CLUSTER === 'true',
        sentinelPassword: env.HEATSINK_SENTINEL_PASSWORD ?? null,
      },
      /** How often the metrics reporter samples every node's INFO; 0 turns the node view off. */
      nodeSampleMs: env.HEATSINK_NODE_SAMPLE_MS ?? 1000,
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
  throw new ConfigError(environmentProblems(result.error))
}

/** Logs, at start, each setting that leaves the replica open: no API token, no registry signing key. */
export function warnUnsafeSettings(config: Config, log: Logger): void {
  if (config.apiToken === null) {
    log.warn(
      { host: config.host, ignoredHost: config.ignoredHost },
      'HEATSINK_API_TOKEN is not set: write endpoints are unauthenticated, so the API listens on loopback only',
    )
  }
  if (config.registryKey === null) {
    log.warn(
      'HEATSINK_REGISTRY_KEY is not set: registry events are published unsigned, so agents cannot tell them from forged ones',
    )
  }
}
