import { useTestPostgres } from '@heatsink/test'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../src/db/database.js'
import { migrate } from '../src/db/migrate.js'
import { createPgDatabase } from '../src/db/pg-database.js'
import { RegistryUnavailableError } from '../src/errors.js'
import { buildApi } from '../src/http/app.js'
import { createMetrics, type Metrics } from '../src/metrics.js'
import { RegistryService } from '../src/registry/registry-service.js'
import { NO_TRAFFIC } from '../src/traffic-reader.js'
import { ChaosProxy } from './support/chaos-proxy.js'

const postgres = useTestPostgres()

// Short timeouts, so a silent server fails calls in about a second instead of the production defaults.
const CONNECT_TIMEOUT_MS = 500
const QUERY_TIMEOUT_MS = 1_000

const manual = { source: 'manual', actor: 'ops', reason: 'outage test' } as const

describe('a Postgres outage', () => {
  let proxy: ChaosProxy
  let db: Database
  let metrics: Metrics
  let registry: RegistryService

  beforeEach(async () => {
    // Everything goes through a proxy the test can cut, in front of the real Postgres and this test's schema.
    const target = new URL(postgres().url)
    proxy = new ChaosProxy({ host: target.hostname, port: Number(target.port || 5432) })
    await proxy.start()
    const url = new URL(postgres().url)
    url.hostname = '127.0.0.1'
    url.port = String(proxy.port)
    db = createPgDatabase(url.toString(), {
      connectionTimeoutMs: CONNECT_TIMEOUT_MS,
      queryTimeoutMs: QUERY_TIMEOUT_MS,
      max: 4,
    })
    await migrate(db)
    metrics = createMetrics()
    registry = new RegistryService(db, { metrics })
  })
  afterEach(async () => {
    await db.close()
    await proxy.close()
  })

  const versions = async () =>
    (
      await postgres().pool.query<{ version: string }>('SELECT version FROM hot_key_events ORDER BY version')
    ).rows.map((row) => Number(row.version))

  it('fails writes and reads with RegistryUnavailableError (503 from the API), loses nothing, and resumes without a version gap', async () => {
    const app = buildApi({
      registry,
      traffic: NO_TRAFFIC,
      metrics,
      probes: [],
      apiToken: null,
    })
    await registry.promote({ key: 'before:1', mitigation: 'local_cache', ...manual })
    await registry.promote({ key: 'before:2', mitigation: 'split', splitFactor: 2, ...manual })

    // The server goes away: open connections die and new ones are refused.
    await proxy.cut()
    const write = await registry
      .promote({ key: 'during', mitigation: 'local_cache', ...manual })
      .catch((e) => e)
    expect(write).toBeInstanceOf(RegistryUnavailableError)
    expect(write).toMatchObject({ code: 'E_REGISTRY_UNAVAILABLE', operation: 'promote' })
    expect((write as Error).cause).toBeInstanceOf(Error)
    await expect(registry.list()).rejects.toBeInstanceOf(RegistryUnavailableError)
    await expect(registry.demote('before:1', { actor: 'ops', reason: 'x' })).rejects.toBeInstanceOf(
      RegistryUnavailableError,
    )
    const response = await app.inject({
      method: 'POST',
      url: '/hotkeys/during/promote',
      payload: { mitigation: 'local_cache' },
    })
    expect(response.statusCode).toBe(503)
    expect(response.json()).toMatchObject({
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'E_REGISTRY_UNAVAILABLE',
    })
    expect(response.json().message).toMatch(/registry unavailable.*retry/)
    expect(await metrics.registry.metrics()).toMatch(/heatsink_registry_write_failures_total 3\b/)

    // Postgres is back on the same address: the pool reconnects by itself.
    await proxy.restore()
    const after = await registry.promote({ key: 'during', mitigation: 'local_cache', ...manual })
    expect(after).toMatchObject({ created: true, entry: { version: 3 } })
    expect((await registry.list()).map((entry) => entry.key)).toEqual(['before:1', 'before:2', 'during'])
    expect(await versions()).toEqual([1, 2, 3])
    await app.close()
  })

  it('does not wedge on a server that accepts connections but never answers', async () => {
    await registry.promote({ key: 'warm', mitigation: 'local_cache', ...manual })

    // A partition: pooled connections and new ones alike go silent.
    proxy.stall()
    const started = Date.now()
    await expect(
      registry.promote({ key: 'stuck', mitigation: 'coalesce', ...manual }),
    ).rejects.toBeInstanceOf(RegistryUnavailableError)
    await expect(registry.get('warm')).rejects.toBeInstanceOf(RegistryUnavailableError)
    // Bounded by the timeouts (a query timeout, then the rollback's), not hanging.
    expect(Date.now() - started).toBeLessThan(4 * QUERY_TIMEOUT_MS + 1_000)

    proxy.restore()
    expect(await registry.promote({ key: 'stuck', mitigation: 'coalesce', ...manual })).toMatchObject({
      created: true,
      entry: { version: 2 },
    })
    expect(await versions()).toEqual([1, 2])
  })

  it('applies nothing of a transaction cut off midway', async () => {
    await registry.promote({ key: 'kept', mitigation: 'local_cache', ...manual })

    const interrupted = db.transaction(async (tx) => {
      await tx.query('UPDATE registry_meta SET version = version + 1')
      await tx.query("UPDATE hot_key_registry SET mitigation_type = 'split' WHERE raw_key = 'kept'")
      await proxy.cut()
      await tx.query("UPDATE hot_key_registry SET split_factor = 4 WHERE raw_key = 'kept'")
    })
    await expect(interrupted).rejects.toThrow()

    await proxy.restore()
    expect(await registry.get('kept')).toMatchObject({
      mitigation: 'local_cache',
      splitFactor: 1,
      version: 1,
    })
    expect(
      (await registry.promote({ key: 'next', mitigation: 'local_cache', ...manual })).entry.version,
    ).toBe(2)
  })
})
