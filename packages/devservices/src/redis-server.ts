import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { errorMessage } from './error-message.js'
import { ServiceUnavailableError } from './errors.js'
import { onProcessExit } from './exit-cleanup.js'
import { findExecutable, pathDirs } from './find-executable.js'
import { isLocalHost, socketHost } from './local-host.js'
import { redactUrl } from './redact-url.js'
import { pingRedis } from './redis-ping.js'
import { startRedisProcess } from './redis-process.js'
import type { EnsureServiceOptions, RunningService, ServiceLog } from './running-service.js'
import { isListening } from './tcp-probe.js'

/** Where ensureRedis looks when neither `url` nor REDIS_URL says otherwise. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

/** Options of ensureRedis. */
export interface EnsureRedisOptions extends EnsureServiceOptions {
  /** Default: REDIS_URL, else redis://127.0.0.1:6379. */
  readonly url?: string
}

/**
 * Finds a Redis that answers PING at `url`, or, when nothing listens on that local address, starts a private
 * redis-server on a free port. Throws ServiceUnavailableError saying how to get Redis when neither works.
 */
export async function ensureRedis(options: EnsureRedisOptions = {}): Promise<RunningService> {
  const url = options.url ?? process.env.REDIS_URL ?? DEFAULT_REDIS_URL
  const log = options.log ?? (() => {})
  const { hostname, port } = parseRedisUrl(url)
  const host = socketHost(hostname)

  if (await isListening(host, port)) {
    try {
      await pingRedis(url)
    } catch (cause) {
      const reason = `something listens at ${hostname}:${port} but did not answer PING (${errorMessage(cause)})`
      throw unavailable(url, reason, cause)
    }
    log(`redis: using the server at ${redactUrl(url)}`)
    return { url, started: false, stop: async () => {} }
  }

  if (!isLocalHost(hostname)) {
    throw unavailable(url, `nothing answers at ${hostname}:${port}, which is not this machine`)
  }
  const dirs = options.binDirs ?? pathDirs()
  const binary = findExecutable('redis-server', dirs)
  if (binary === undefined) {
    const searched = dirs.length === 0 ? 'no directories' : dirs.join(':')
    const reason = `nothing listens at ${hostname}:${port}, and redis-server is not installed (searched ${searched}) to start a private one`
    throw unavailable(url, reason)
  }
  return startPrivateRedis(binary, url, log, options.startTimeoutMs ?? 30_000)
}

async function startPrivateRedis(
  binary: string,
  requestedUrl: string,
  log: ServiceLog,
  timeoutMs: number,
): Promise<RunningService> {
  const dir = mkdtempSync(join(tmpdir(), 'heatsink-redis-'))
  const removeDir = () => rmSync(dir, { recursive: true, force: true })
  const forgetDir = onProcessExit(removeDir)
  let started: Awaited<ReturnType<typeof startRedisProcess>>
  try {
    started = await startRedisProcess({ binary, dir, service: 'redis', timeoutMs })
  } catch (error) {
    forgetDir()
    removeDir()
    throw error
  }
  // The caller owns the lifetime through stop(); the exit hook covers callers that never call it.
  started.process.unref()
  const url = `redis://127.0.0.1:${started.port}${databasePath(requestedUrl)}`
  log(`redis: nothing listened at ${redactUrl(requestedUrl)}; started a private redis-server at ${url}`)
  let stopping: Promise<void> | undefined
  return {
    url,
    started: true,
    stop: () => {
      stopping ??= (async () => {
        await started.process.stop()
        forgetDir()
        removeDir()
      })()
      return stopping
    },
  }
}

function parseRedisUrl(url: string): { hostname: string; port: number } {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (cause) {
    throw unavailable(url, 'it is not a valid URL (expected redis://host:port)', cause)
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw unavailable(url, `its scheme is ${parsed.protocol} (expected redis: or rediss:)`)
  }
  return { hostname: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 6379) }
}

// A private server has no password or TLS, but a database index in the path still applies to it.
function databasePath(url: string): string {
  const path = new URL(url).pathname
  return /^\/\d+$/.test(path) ? path : ''
}

function unavailable(url: string, reason: string, cause?: unknown): ServiceUnavailableError {
  const message = [
    `Redis is not available at ${redactUrl(url)}: ${reason}.`,
    'To get one, do any of:',
    '  - point REDIS_URL at a running Redis 7, e.g. REDIS_URL=redis://127.0.0.1:6379',
    '  - install redis-server, so a private one is started on a free port:',
    '      apt-get install -y --no-install-recommends redis-server   (Debian/Ubuntu)',
    '      brew install redis                                         (macOS)',
    '  - run a Docker engine, so the test setup starts one with testcontainers',
  ].join('\n')
  return new ServiceUnavailableError('redis', url, message, cause === undefined ? undefined : { cause })
}
