import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import { BackendAddressError } from '../errors.js'

/** Where the proxy's backend Redis is and how to log in to it (never the proxy's own passwords). */
export interface BackendAddress {
  readonly host: string
  readonly port: number
  readonly username: string | undefined
  readonly password: string | undefined
  readonly db: number
  /** TLS options when the URL is rediss://; undefined for plain TCP. */
  readonly tls: ConnectionOptions | undefined
  /** The URL as given, for the agent's own connections. */
  readonly url: string
}

/** Reads `redis://[user:password@]host[:port][/db]` or `rediss://...` (TLS); throws BackendAddressError. */
export function parseBackendUrl(url: string, tls: ConnectionOptions = {}): BackendAddress {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (cause) {
    throw new BackendAddressError(`not a URL: ${JSON.stringify(redact(url))}`, { cause })
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new BackendAddressError(`expected a redis:// or rediss:// URL, got ${parsed.protocol}//`)
  }
  const path = parsed.pathname.replace(/^\//, '')
  const db = path === '' ? 0 : Number(path)
  if (!Number.isInteger(db) || db < 0) {
    throw new BackendAddressError(
      `the database in the URL's path must be a non-negative integer, got ${JSON.stringify(path)}`,
    )
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1'
  return {
    host,
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    db,
    // SNI names a host; an IP address is not a server name (RFC 6066), and Node warns when given one.
    tls:
      parsed.protocol === 'rediss:' ? { ...(isIP(host) === 0 && { servername: host }), ...tls } : undefined,
    url,
  }
}

/** The URL with its password replaced, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
}
