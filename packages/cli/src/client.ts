import type { AgentStatus, KeyStatsBody, MissStorm, NodesView, RegistryChange } from '@heatsink/protocol'
import { CliError, ExitCode, exitCodeForStatus } from './exit-codes.js'

/** One registry entry as GET /hotkeys lists it. */
export interface HotKey {
  key: string
  mitigation: 'local_cache' | 'split' | 'coalesce' | 'replica_read'
  splitFactor: number
  ttlSeconds: number | null
  source: 'auto' | 'manual'
  detectedAt: string
  expiresAt: string | null
  requestsPerSecond: number | null
  version: number
}

/** GET /hotkeys/{key}/stats. */
export type KeyStats = KeyStatsBody

/** Body of POST /hotkeys/{key}/promote. */
export interface PromoteBody {
  mitigation: string
  splitFactor?: number
  ttlSeconds?: number
}

// A control plane that does not answer within this is reported as unreachable rather than waited on for ever.
const TIMEOUT_MS = 10_000

/** The aggregator's REST API, as the CLI uses it; every failure is a CliError with its exit code. */
export class ControlPlaneClient {
  readonly #base: string
  readonly #token: string | undefined

  constructor(baseUrl: string, token: string | undefined) {
    this.#base = baseUrl.replace(/\/+$/, '')
    this.#token = token
  }

  hotkeys(): Promise<{ hotkeys: HotKey[] }> {
    return this.#call('GET', '/hotkeys')
  }

  stats(key: string): Promise<KeyStats> {
    return this.#call('GET', `/hotkeys/${encodeURIComponent(key)}/stats`)
  }

  agents(): Promise<{ agents: AgentStatus[] }> {
    return this.#call('GET', '/agents')
  }

  nodes(): Promise<NodesView> {
    return this.#call('GET', '/nodes')
  }

  /**
   * Registry changes above `after` and miss storms after `stormsAfter` (all recent ones when absent), newest first;
   * an aggregator older than storms sends no `missStorms`.
   */
  events(
    after: number,
    limit: number,
    stormsAfter?: string,
  ): Promise<{ events: RegistryChange[]; missStorms?: MissStorm[] }> {
    const storms = stormsAfter === undefined ? '' : `&stormsAfter=${encodeURIComponent(stormsAfter)}`
    return this.#call('GET', `/events?after=${after}&limit=${limit}${storms}`)
  }

  promote(key: string, body: PromoteBody): Promise<HotKey & { created: boolean }> {
    return this.#call('POST', `/hotkeys/${encodeURIComponent(key)}/promote`, body)
  }

  demote(key: string): Promise<void> {
    return this.#call('DELETE', `/hotkeys/${encodeURIComponent(key)}`)
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (this.#token !== undefined && method !== 'GET') headers.authorization = `Bearer ${this.#token}`
    let response: Response
    try {
      response = await fetch(`${this.#base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
    } catch (error) {
      const cause = error as { message: string; cause?: { code?: string; message?: string } }
      const reason = cause.cause?.code ?? cause.cause?.message ?? cause.message
      throw new CliError(
        `cannot reach the control plane at ${this.#base} (${reason}); set HEATSINK_URL or --url`,
        ExitCode.unreachable,
      )
    }
    const text = await response.text()
    if (!response.ok)
      throw new CliError(
        failureMessage(response.status, text, this.#token),
        exitCodeForStatus(response.status),
      )
    const parsed = text === '' ? undefined : (JSON.parse(text) as T)
    return (method === 'POST' ? { ...parsed, created: response.status === 201 } : parsed) as T
  }
}

function failureMessage(status: number, text: string, token: string | undefined): string {
  if (status === 401) {
    return token === undefined
      ? 'the control plane needs an API token for this: set HEATSINK_API_TOKEN or pass --token'
      : 'the control plane refused the API token (HEATSINK_API_TOKEN / --token)'
  }
  try {
    const body = JSON.parse(text) as { message?: string }
    if (typeof body.message === 'string') return body.message
  } catch {
    // Not the API's JSON (a proxy's page): the status says enough.
  }
  return `the control plane answered ${status}`
}
