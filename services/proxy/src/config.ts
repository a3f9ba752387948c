import { hostname } from 'node:os'
import { L1_MAX_ENTRIES, L1_MIN_ENTRIES } from '@heatsink/agent'
import {
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
} from '@heatsink/protocol'
import { z } from 'zod'
import { ConfigError } from './errors.js'
import { DEFAULT_PROXY_PORT } from './proxy.js'

// Passwords are never echoed in messages.
const users = envText.transform((raw, ctx) => {
  if (raw === undefined) return undefined
  const parsed = new Map<string, string>()
  for (const entry of raw.split(',')) {
    const colon = entry.indexOf(':')
    const user = entry.slice(0, colon).trim()
    if (colon <= 0 || colon === entry.length - 1 || !/^[\x21-\x7e]+$/.test(user)) {
      ctx.addIssue({ code: 'custom', message: "expected comma-separated 'user:password' pairs" })
      return z.NEVER
    }
    parsed.set(user, entry.slice(colon + 1))
  }
  return parsed
})

const Environment = z.object({
  REDIS_URL: envRedisUrl,
  HEATSINK_CONTROL_REDIS_URL: envRedisUrl,
  HEATSINK_SENTINEL_PASSWORD: envText,
  PORT: envPort,
  HOST: envText,
  HEATSINK_PROXY_METRICS_PORT: envPort,
  HEATSINK_PROXY_PASSWORD: envText,
  HEATSINK_PROXY_USERS: users,
  HEATSINK_PROXY_MAX_CLIENTS: envPositiveInteger,
  HEATSINK_PROXY_CLIENT_OUTPUT_LIMIT_MB: envPositiveInteger,
  HEATSINK_PROXY_BACKEND_CONNECTIONS: envNumber(
    'an integer from 1 to 64',
    (n) => Number.isInteger(n) && n >= 1 && n <= 64,
  ),
  HEATSINK_PROXY_BACKEND_TLS_CA_FILE: envText,
  HEATSINK_PROXY_WORKERS: envNumber(
    'an integer from 1 to 256',
    (n) => Number.isInteger(n) && n >= 1 && n <= 256,
  ),
  HEATSINK_PROXY_CLUSTER: envMatching("'true' or 'false'", (raw) => raw === 'true' || raw === 'false'),
  HEATSINK_CONTROL_REDIS_CLUSTER: envMatching(
    "'true' or 'false'",
    (raw) => raw === 'true' || raw === 'false',
  ),
  HEATSINK_NAMESPACE: envNamespace,
  HEATSINK_AGENT_ID: envMatching('1 to 128 characters', (raw) => raw.length <= 128),
  HEATSINK_REGISTRY_KEY: envRegistryKey,
  HEATSINK_WINDOW_MS: envPositiveInteger,
  HEATSINK_L1_MAX_ENTRIES: envNumber(
    `an integer from ${L1_MIN_ENTRIES} to ${L1_MAX_ENTRIES}`,
    (n) => Number.isInteger(n) && n >= L1_MIN_ENTRIES && n <= L1_MAX_ENTRIES,
  ),
  HEATSINK_L1_MAX_MB: envPositiveInteger,
  HEATSINK_SHUTDOWN_TIMEOUT_MS: envPositiveInteger,
  LOG_LEVEL: envLogLevel,
})

/** Where the proxy listens when no password is set: a proxy without AUTH must not be reachable off the host. */
export const LOOPBACK_HOST = '127.0.0.1'

/** The proxy's validated configuration. */
export type ProxyConfig = ReturnType<typeof loadProxyConfig>

/**
 * Reads the proxy's configuration from environment variables, filling in defaults; throws ConfigError naming
 * every bad variable and what was expected (never echoing a password).
 */
export function loadProxyConfig(env: Record<string, string | undefined>) {
  const result = Environment.safeParse(env)
  if (!result.success) {
    throw new ConfigError(`invalid configuration: ${environmentProblems(result.error).join('; ')}`)
  }
  const e = result.data
  const passwords = new Map(e.HEATSINK_PROXY_USERS ?? [])
  if (e.HEATSINK_PROXY_PASSWORD !== undefined) passwords.set('default', e.HEATSINK_PROXY_PASSWORD)
  // Without a password anyone who reaches the port reaches Redis, so the proxy stays on loopback unless HOST says.
  const host = e.HOST ?? (passwords.size === 0 ? LOOPBACK_HOST : '0.0.0.0')
  return {
    backend: e.REDIS_URL ?? 'redis://127.0.0.1:6379',
    /** Heatsink's own Redis, whatever the backend is; undefined: the backend. */
    control: e.HEATSINK_CONTROL_REDIS_URL,
    /** The control Redis is a Redis Cluster (HEATSINK_CONTROL_REDIS_URL names one of its nodes). */
    controlCluster: e.HEATSINK_CONTROL_REDIS_CLUSTER === 'true',
    /** Sentinel's own password for a redis+sentinel:// URL without `sentinelPassword`. */
    sentinelPassword: e.HEATSINK_SENTINEL_PASSWORD,
    port: e.PORT ?? DEFAULT_PROXY_PORT,
    host,
    metricsPort: e.HEATSINK_PROXY_METRICS_PORT ?? 9380,
    passwords,
    maxClients: e.HEATSINK_PROXY_MAX_CLIENTS ?? 10_000,
    clientOutputLimitBytes: (e.HEATSINK_PROXY_CLIENT_OUTPUT_LIMIT_MB ?? 256) * 1024 * 1024,
    sharedConnections: e.HEATSINK_PROXY_BACKEND_CONNECTIONS ?? 4,
    backendTlsCaFile: e.HEATSINK_PROXY_BACKEND_TLS_CA_FILE,
    cluster: e.HEATSINK_PROXY_CLUSTER === 'true',
    workers: e.HEATSINK_PROXY_WORKERS ?? 1,
    namespace: e.HEATSINK_NAMESPACE,
    agentId: e.HEATSINK_AGENT_ID ?? `proxy-${hostname()}-${process.pid}`,
    registryKey: e.HEATSINK_REGISTRY_KEY,
    windowMs: e.HEATSINK_WINDOW_MS,
    l1: {
      maxEntries: e.HEATSINK_L1_MAX_ENTRIES,
      maxBytes: e.HEATSINK_L1_MAX_MB === undefined ? undefined : e.HEATSINK_L1_MAX_MB * 1024 * 1024,
    },
    shutdownTimeoutMs: e.HEATSINK_SHUTDOWN_TIMEOUT_MS ?? 10_000,
    logLevel: e.LOG_LEVEL ?? 'info',
  }
}
