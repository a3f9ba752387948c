// Calls to the aggregator's REST API from the page. Same origin: the page is served by the replica it calls.

/** A request the API refused or could not serve, with the API's own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** Body of POST /hotkeys/{key}/promote. */
export interface PromoteRequest {
  mitigation: 'local_cache' | 'split' | 'coalesce' | 'replica_read'
  splitFactor?: number
  ttlSeconds?: number
}

const path = (key: string) => `hotkeys/${encodeURIComponent(key)}`

/** GET a JSON document; `null` on 404. */
export async function getJson<T>(url: string): Promise<T | null> {
  const response = await fetch(url, { headers: { accept: 'application/json' } })
  if (response.status === 404) return null
  if (!response.ok) throw await apiError(response, null)
  return (await response.json()) as T
}

/** Promotes (or changes) a key; the token is sent only when the operator typed one. */
export async function promote(key: string, body: PromoteRequest, token: string | null): Promise<void> {
  const response = await fetch(`${path(key)}/promote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authorization(token) },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw await apiError(response, token)
}

/** Demotes a key. */
export async function demote(key: string, token: string | null): Promise<void> {
  const response = await fetch(path(key), { method: 'DELETE', headers: authorization(token) })
  if (!response.ok) throw await apiError(response, token)
}

/** GET /hotkeys/{key}/stats, /hotkeys/{key}/agents and /events?key=, for the key page. */
export const keyUrls = (key: string) => ({
  stats: `${path(key)}/stats`,
  agents: `${path(key)}/agents`,
  events: `events?limit=100&key=${encodeURIComponent(key)}`,
})

function authorization(token: string | null): Record<string, string> {
  return token === null ? {} : { authorization: `Bearer ${token}` }
}

// Says what the operator can do about it, since the API's own 401 message names a header they never see here.
async function apiError(response: Response, token: string | null): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`
  try {
    const body = (await response.json()) as { message?: string }
    if (typeof body.message === 'string') message = body.message
  } catch {
    // Not JSON (a proxy's error page): the status line says enough.
  }
  if (response.status === 401) {
    message =
      token === null
        ? 'Writes need the API token (HEATSINK_API_TOKEN): type it in the token field above.'
        : 'The API token was refused: check the token field above.'
  } else if (response.status === 503) {
    message = `The control plane cannot reach its registry right now: ${message}`
  }
  return new ApiError(response.status, message)
}
