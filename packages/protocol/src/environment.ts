import { z } from 'zod'
import { createNames } from './names.js'
import { redisUrlProblem } from './redis-url.js'
import { registryKeyProblem } from './registry-mac.js'

/**
 * How Heatsink's processes (the aggregator, the proxy) read environment variables: every one as text, checked
 * by zod, each problem a message `expected <what>, got '<value>'` that the service prints with the variable's
 * name. Secrets (tokens, keys, passwords) are never echoed.
 */

/** pino's levels, the values LOG_LEVEL takes. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A variable read as trimmed text, undefined when unset or empty (shells and compose files often write empty ones). */
export const envText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()))

/** A variable that must parse as a number accepted by `accept`; `expected` completes "expected ...". */
export function envNumber(expected: string, accept: (n: number) => boolean) {
  return envText.transform((raw, ctx) => {
    if (raw === undefined) return undefined
    const value = Number(raw)
    if (!Number.isFinite(value) || !accept(value)) {
      ctx.addIssue({ code: 'custom', message: `expected ${expected}, got '${raw}'` })
      return z.NEVER
    }
    return value
  })
}

/** A text variable that must satisfy `accept`; `expected` completes "expected ...". */
export function envMatching(expected: string, accept: (raw: string) => boolean) {
  return envText.refine((raw) => raw === undefined || accept(raw), {
    error: (issue) => `expected ${expected}, got '${String(issue.input)}'`,
  })
}

export const envPort = envNumber(
  'an integer port from 0 to 65535',
  (n) => Number.isInteger(n) && n >= 0 && n <= 65_535,
)
export const envPositiveInteger = envNumber('a positive integer', (n) => Number.isInteger(n) && n > 0)

/** HEATSINK_NAMESPACE: what createNames accepts. */
export const envNamespace = envMatching(
  "1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'",
  (raw) => {
    try {
      createNames(raw)
      return true
    } catch {
      return false
    }
  },
)

/** HEATSINK_REGISTRY_KEY: the key registry messages are signed with; the message never echoes it. */
export const envRegistryKey = envText.superRefine((raw, ctx) => {
  const problem = raw === undefined ? undefined : registryKeyProblem(raw)
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
})

/** REDIS_URL and the like: one server's URL or the Sentinel form; the message never echoes a password. */
export const envRedisUrl = envText.superRefine((raw, ctx) => {
  const problem = raw === undefined ? undefined : redisUrlProblem(raw)
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
})

export const envLogLevel = envMatching(`one of ${LOG_LEVELS.join(', ')}`, (raw) =>
  (LOG_LEVELS as readonly string[]).includes(raw),
)

/** Every problem zod found, one line each: `VARIABLE: expected ..., got '...'`. */
export function environmentProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)
}
