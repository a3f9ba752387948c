import { errorMessage } from './error-message.js'
import { ServiceUnavailableError } from './errors.js'
import { isLocalHost, socketHost } from './local-host.js'
import { defaultPostgresBinDirs, findPostgresBinaries } from './postgres-binaries.js'
import { checkPostgres } from './postgres-query.js'
import { postgresRunner } from './postgres-user.js'
import { startPrivatePostgres } from './private-postgres.js'
import { redactUrl } from './redact-url.js'
import type { EnsureServiceOptions, RunningService } from './running-service.js'
import { isListening } from './tcp-probe.js'

/** Where ensurePostgres looks when neither `url` nor DATABASE_URL says otherwise. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres'

/** Options of ensurePostgres. */
export interface EnsurePostgresOptions extends EnsureServiceOptions {
  /** Default: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres. */
  readonly url?: string
}

/**
 * Finds a Postgres that answers `SELECT 1` at `url`, or, when nothing listens on that local address, creates
 * and starts a private cluster on a free port. Throws ServiceUnavailableError saying how to get Postgres otherwise.
 */
export async function ensurePostgres(options: EnsurePostgresOptions = {}): Promise<RunningService> {
  const url = options.url ?? process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL
  const log = options.log ?? (() => {})
  const { hostname, port } = parsePostgresUrl(url)

  if (await isListening(socketHost(hostname), port)) {
    try {
      await checkPostgres(url)
    } catch (cause) {
      const reason = `something listens at ${hostname}:${port} but SELECT 1 failed (${errorMessage(cause)})`
      throw unavailable(url, reason, cause)
    }
    log(`postgres: using the server at ${redactUrl(url)}`)
    return { url, started: false, stop: async () => {} }
  }

  if (!isLocalHost(hostname)) {
    throw unavailable(url, `nothing answers at ${hostname}:${port}, which is not this machine`)
  }
  const dirs = options.binDirs ?? defaultPostgresBinDirs()
  const binaries = findPostgresBinaries(dirs)
  if (binaries === undefined) {
    const searched = dirs.length === 0 ? 'no directories' : dirs.join(':')
    const reason = `nothing listens at ${hostname}:${port}, and initdb and pg_ctl are not installed (searched ${searched}) to start a private one`
    throw unavailable(url, reason)
  }
  const runner = postgresRunner()
  if (typeof runner === 'string')
    throw unavailable(url, `nothing listens at ${hostname}:${port}, and ${runner}`)

  const service = await startPrivatePostgres({
    binaries,
    runner,
    requestedUrl: url,
    timeoutMs: options.startTimeoutMs ?? 30_000,
  })
  log(
    `postgres: nothing listened at ${redactUrl(url)}; started a private cluster at ${redactUrl(service.url)}`,
  )
  return service
}

function parsePostgresUrl(url: string): { hostname: string; port: number } {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (cause) {
    throw unavailable(url, 'it is not a valid URL (expected postgres://user@host:port/database)', cause)
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw unavailable(url, `its scheme is ${parsed.protocol} (expected postgres: or postgresql:)`)
  }
  return { hostname: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 5432) }
}

function unavailable(url: string, reason: string, cause?: unknown): ServiceUnavailableError {
  const message = [
    `Postgres is not available at ${redactUrl(url)}: ${reason}.`,
    'To get one, do any of:',
    '  - point DATABASE_URL at a running Postgres, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres',
    '  - install the PostgreSQL server, so a private one is started on a free port:',
    '      apt-get install -y --no-install-recommends postgresql   (Debian/Ubuntu)',
    '      brew install postgresql                                 (macOS)',
    '  - run a Docker engine, so the test setup starts one with testcontainers',
  ].join('\n')
  return new ServiceUnavailableError('postgres', url, message, cause === undefined ? undefined : { cause })
}
