import { randomBytes } from 'node:crypto'
import { waitUntil } from '@heatsink/devservices'
import { Redis } from 'ioredis'

const APPLIED_TIMEOUT_MS = 60_000

/** Where the keys are promoted and the proxy that must have applied them. */
export interface PromotionTarget {
  readonly aggregatorPort: number
  readonly proxyPort: number
  readonly proxyMetricsPort: number
}

/**
 * Promotes `keys` to local_cache through the aggregator's API (POST /hotkeys/{key}/promote), then waits until
 * the proxy has applied them: a marker key promoted last must be answered from the proxy's L1 (registry events
 * reach the proxy in the order they were published).
 */
export async function promoteKeys(target: PromotionTarget, keys: readonly string[]): Promise<void> {
  const marker = `redis-suite-marker-${randomBytes(4).toString('hex')}`
  for (const key of [...keys, marker]) await promote(target.aggregatorPort, key)
  const client = new Redis({ port: target.proxyPort, lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await client.set(marker, 'promoted')
    const applied = await waitUntil(
      async () => {
        await client.get(marker)
        return (await servedFromL1(target.proxyMetricsPort, marker)) > 0
      },
      { timeoutMs: APPLIED_TIMEOUT_MS, intervalMs: 100 },
    )
    if (!applied)
      throw new Error(`the proxy did not apply ${keys.length + 1} promotions within ${APPLIED_TIMEOUT_MS} ms`)
    await client.del(marker)
  } finally {
    client.disconnect()
  }
}

async function promote(aggregatorPort: number, key: string): Promise<void> {
  const response = await fetch(
    `http://127.0.0.1:${aggregatorPort}/hotkeys/${encodeURIComponent(key)}/promote`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mitigation: 'local_cache' }),
    },
  )
  if (response.status !== 200 && response.status !== 201) {
    throw new Error(`promoting ${JSON.stringify(key)} answered ${response.status}: ${await response.text()}`)
  }
}

// heatsink_proxy_hot_key_l1_served_total{key="<key>"} in the proxy's /metrics; 0 when absent.
async function servedFromL1(metricsPort: number, key: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const line = text
    .split('\n')
    .find((row) => row.startsWith(`heatsink_proxy_hot_key_l1_served_total{key="${key}"}`))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}
