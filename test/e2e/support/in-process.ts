import { type Aggregator, createAggregator, loadConfig } from '@heatsink/aggregator'

/**
 * An aggregator replica in this process, on the test's Redis namespace and Postgres schema, listening on a free
 * port; `env` adds or overrides variables as the container's environment would.
 */
export function inProcessAggregator(
  service: { redisUrl: string; databaseUrl: string; namespace: string },
  env: Record<string, string> = {},
): Aggregator {
  return createAggregator(
    loadConfig({
      REDIS_URL: service.redisUrl,
      DATABASE_URL: service.databaseUrl,
      HEATSINK_NAMESPACE: service.namespace,
      PORT: '0',
      ...env,
    }),
  )
}

/** Polls `condition` every 10 ms until it holds; for what arrives by pub/sub, which no test can await. */
export async function until(what: string, condition: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** `POST /hotkeys/{key}/promote` on the aggregator at `base` (no API token), as an operator promotes a key. */
export function promoteByRest(base: string, key: string, mitigation = 'local_cache'): Promise<Response> {
  return fetch(`${base}/hotkeys/${encodeURIComponent(key)}/promote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mitigation }),
  })
}
