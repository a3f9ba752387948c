import { hostname } from 'node:os'
import { createNames, registryKeyProblem } from '@heatsink/protocol'
import { z } from 'zod'
import { ConfigError } from './errors.js'
import { DEFAULT_PROXY_PORT } from './proxy.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

// Every variable is read as text; an empty value counts as unset, as shells and compose files often write them.
const text = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()))

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

const port = numeric('an integer port from 0 to 65535', (n) => Number.isInteger(n) && n >= 0 && n <= 65_535)
const positiveInteger = numeric('a positive integer', (n) => Number.isInteger(n) && n > 0)

// Passwords are never echoed in messages.
const users = text.transform((raw, ctx) => {
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
  REDIS_URL: matching('a redis:// or rediss:// URL', (raw) => /^rediss?:\/\/[^/]/.test(raw)),
  PORT: port,
  HOST: text,
  HEATSINK_PROXY_METRICS_PORT: port,
  HEATSINK_PROXY_PASSWORD: text,
  HEATSINK_PROXY_USERS: users,
  HEATSINK_PROXY_MAX_CLIENTS: positiveInteger,
  HEATSINK_PROXY_CLIENT_OUTPUT_LIMIT_MB: positiveInteger,
  HEATSINK_PROXY_BACKEND_CONNECTIONS: numeric(
    'an integer from 1 to 64',
    (n) => Number.isInteger(n) && n >= 1 && n <= 64,
  ),
  HEATSINK_PROXY_BACKEND_TLS_CA_FILE: text,
  HEATSINK_PROXY_WORKERS: numeric(
    'an integer from 1 to 256',
    (n) => Number.isInteger(n) && n >= 1 && n <= 256,
  ),
  HEATSINK_PROXY_CLUSTER: matching("'true' or 'false'", (raw) => raw === 'true' || raw === 'false'),
  HEATSINK_NAMESPACE: matching("1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'", isNamespace),
  HEATSINK_AGENT_ID: matching('1 to 128 characters', (raw) => raw.length <= 128),
  HEATSINK_REGISTRY_KEY: registryKey,
  HEATSINK_WINDOW_MS: positiveInteger,
  HEATSINK_L1_MAX_ENTRIES: numeric(
    'an integer from 512 to 2048',
    (n) => Number.isInteger(n) && n >= 512 && n <= 2048,
  ),
  HEATSINK_L1_MAX_MB: positiveInteger,
  HEATSINK_SHUTDOWN_TIMEOUT_MS: positiveInteger,
  LOG_LEVEL: matching(`one of ${LOG_LEVELS.join(', ')}`, (raw) =>
    (LOG_LEVELS as readonly string[]).includes(raw),
  ),
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
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`)
  }
  const e = result.data
  const passwords = new Map(e.HEATSINK_PROXY_USERS ?? [])
  if (e.HEATSINK_PROXY_PASSWORD !== undefined) passwords.set('default', e.HEATSINK_PROXY_PASSWORD)
  // Without a password anyone who reaches the port reaches Redis, so the proxy stays on loopback unless HOST says.
  const host = e.HOST ?? (passwords.size === 0 ? LOOPBACK_HOST : '0.0.0.0')
  return {
    backend: e.REDIS_URL ?? 'redis://127.0.0.1:6379',
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
