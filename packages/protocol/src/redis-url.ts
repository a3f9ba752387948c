import { InvalidRedisUrlError } from './errors.js'
import { redactUrl } from './redact-url.js'

/**
 * The Redis URLs Heatsink's services take: `redis://` and `rediss://` (one server, parsed by ioredis), and the
 * Sentinel form, as redis-sentinel-url (Python) and Bitnami's charts spell it:
 *
 *   redis+sentinel://[user:password@]host1:port1,host2:port2,.../<master-name>[/<db>][?options]
 *   rediss+sentinel://...   the same, with TLS to the primary and replicas
 *
 * `user:password` log in to the primary (and replicas), not to the sentinels. A sentinel port defaults to 26379.
 * Options: `sentinelPassword` and `sentinelUsername` (Sentinel's own `requirepass`/ACL user; the password may also
 * come from HEATSINK_SENTINEL_PASSWORD, which the URL overrides) and `sentinelTls=true` (TLS to the sentinels).
 */

/** ioredis's Sentinel options, as a URL of the Sentinel form gives them (pass them to `new Redis(...)`). */
export interface SentinelUrlOptions {
  readonly sentinels: { host: string; port: number }[]
  /** The master name Sentinel monitors. */
  readonly name: string
  readonly db: number
  readonly username?: string
  readonly password?: string
  readonly sentinelUsername?: string
  readonly sentinelPassword?: string
  /** TLS to the primary and replicas (rediss+sentinel://); ioredis needs enableTLSForSentinelMode to use it. */
  readonly tls?: Record<string, never>
  readonly enableTLSForSentinelMode: boolean
  /** TLS to the sentinels (`sentinelTls=true`). */
  readonly sentinelTLS?: Record<string, never>
}

/** Where a Sentinel URL's secrets may also come from. */
export interface SentinelUrlEnvironment {
  /** HEATSINK_SENTINEL_PASSWORD; the URL's `sentinelPassword` wins over it. */
  readonly sentinelPassword?: string
}

const SENTINEL_SCHEME = /^(rediss?)\+sentinel:\/\//
const DEFAULT_SENTINEL_PORT = 26379
const OPTION_NAMES = ['sentinelPassword', 'sentinelUsername', 'sentinelTls']

/** Whether `url` is of the Sentinel form (`redis+sentinel://` or `rediss+sentinel://`). */
export function isSentinelUrl(url: string): boolean {
  return SENTINEL_SCHEME.test(url)
}

/** Whether `url` is any Redis URL the services take: one server's, or the Sentinel form (checked in full). */
export function redisUrlProblem(url: string): string | undefined {
  if (isSentinelUrl(url)) {
    try {
      parseSentinelUrl(url)
      return undefined
    } catch (error) {
      return (error as Error).message
    }
  }
  if (/^rediss?:\/\/[^/]/.test(url)) return undefined
  return `expected a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL, got '${redactUrl(url)}'`
}

/** Reads a URL of the Sentinel form into ioredis's Sentinel options; throws InvalidRedisUrlError naming the bad part. */
export function parseSentinelUrl(url: string, env: SentinelUrlEnvironment = {}): SentinelUrlOptions {
  const scheme = SENTINEL_SCHEME.exec(url)
  const fail = (part: string, message: string) => new InvalidRedisUrlError(url, part, message)
  if (scheme === null) throw fail('scheme', 'expected redis+sentinel:// or rediss+sentinel://')
  const rest = url.slice(scheme[0].length)
  const queryAt = rest.indexOf('?')
  const beforeQuery = queryAt === -1 ? rest : rest.slice(0, queryAt)
  const slash = beforeQuery.indexOf('/')
  if (slash === -1) throw fail('master name', 'missing: expected /<master-name> after the sentinels')
  const authority = beforeQuery.slice(0, slash)
  const at = authority.lastIndexOf('@')
  const credentials = at === -1 ? undefined : readCredentials(authority.slice(0, at), fail)
  const sentinels = readSentinels(authority.slice(at + 1), fail)
  const [name, dbText, ...extra] = beforeQuery.slice(slash + 1).split('/')
  if (name === undefined || name === '') throw fail('master name', 'missing: expected /<master-name>')
  if (extra.length > 0) throw fail('path', 'expected /<master-name>[/<db>], got more segments')
  const db = dbText === undefined || dbText === '' ? 0 : Number(dbText)
  if (!/^\d*$/.test(dbText ?? '') || !Number.isSafeInteger(db)) {
    throw fail('db', `expected a non-negative integer, got '${dbText}'`)
  }
  const query = new URLSearchParams(queryAt === -1 ? '' : rest.slice(queryAt + 1))
  for (const key of query.keys()) {
    if (!OPTION_NAMES.includes(key)) {
      throw fail('query', `unknown option '${key}' (known: ${OPTION_NAMES.join(', ')})`)
    }
  }
  const sentinelTls = query.get('sentinelTls') ?? 'false'
  if (sentinelTls !== 'true' && sentinelTls !== 'false') {
    throw fail('query', `sentinelTls: expected 'true' or 'false', got '${sentinelTls}'`)
  }
  const sentinelPassword = nonEmpty(query.get('sentinelPassword')) ?? nonEmpty(env.sentinelPassword)
  const sentinelUsername = nonEmpty(query.get('sentinelUsername'))
  const tls = scheme[1] === 'rediss'
  return {
    sentinels,
    name: decodeURIComponent(name),
    db,
    ...(credentials?.username !== undefined && { username: credentials.username }),
    ...(credentials?.password !== undefined && { password: credentials.password }),
    ...(sentinelUsername !== undefined && { sentinelUsername }),
    ...(sentinelPassword !== undefined && { sentinelPassword }),
    ...(tls && { tls: {} }),
    enableTLSForSentinelMode: tls,
    ...(sentinelTls === 'true' && { sentinelTLS: {} }),
  }
}

type Fail = (part: string, message: string) => Error

function readCredentials(userinfo: string, fail: Fail): { username?: string; password?: string } {
  const colon = userinfo.indexOf(':')
  const username = decode(colon === -1 ? userinfo : userinfo.slice(0, colon), 'user', fail)
  const password = colon === -1 ? undefined : decode(userinfo.slice(colon + 1), 'password', fail)
  return { username: nonEmpty(username), password: nonEmpty(password) }
}

function readSentinels(hosts: string, fail: Fail): { host: string; port: number }[] {
  if (hosts === '')
    throw fail('sentinels', 'missing: expected host:port[,host:port...] before the master name')
  return hosts.split(',').map((entry) => {
    // [v6]:port, v6 in brackets alone, or host[:port].
    const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d*))?$/.exec(entry)
    if (match === null) throw fail('sentinels', `expected host:port, got '${entry}'`)
    const port = match[3] === undefined || match[3] === '' ? DEFAULT_SENTINEL_PORT : Number(match[3])
    if (port < 1 || port > 65_535) throw fail('sentinels', `port out of range in '${entry}'`)
    return { host: (match[1] ?? match[2]) as string, port }
  })
}

function decode(text: string, part: string, fail: Fail): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw fail(part, 'not valid percent-encoding')
  }
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return value === null || value === undefined || value === '' ? undefined : value
}
