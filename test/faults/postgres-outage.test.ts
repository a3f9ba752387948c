import { createNames, decodeRegistryEvent } from '@heatsink/protocol'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { makeReport, sendReport } from '../../services/aggregator/test/support/reports.js'
import type { AggregatorProcess } from './support/aggregator-process.js'
import { usePrivateServices } from './support/private-services.js'
import { until } from './support/until.js'

const world = usePrivateServices()
const HOT_RPS = 1000
// A refused connection fails at once and a broken one on its first use; the pool's own bounds are 5 s to connect
// and 10 s per query, for a server that hangs rather than refuses.
const WRITE_FAILS_WITHIN_MS = 2000
// /readyz bounds each check to 2 s.
const READYZ_FAILS_WITHIN_MS = 3000

/** Times `call`: its result and how long it took. */
async function timed<T>(call: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now()
  const result = await call()
  return { result, ms: performance.now() - started }
}

describe('Postgres stopped and started under two replicas', () => {
  it('writes 503 and readiness 503 within a bound, promotions made meanwhile land after it, versions gapless', async () => {
    const { redis, postgres, server } = world()
    const names = createNames(redis.namespace)
    const env = { HEATSINK_HOT_RPS: String(HOT_RPS) }
    const replicas = [await world().startReplica(env), await world().startReplica(env)]
    const [first, second] = replicas as [AggregatorProcess, AggregatorProcess]
    const published: number[] = []
    const subscriber = redis.client()
    subscriber.on('message', (_channel: string, message: string) =>
      published.push(decodeRegistryEvent(message).version),
    )
    await subscriber.subscribe(names.registryChannel)
    const admin = redis.client()

    expect(
      (await first.promote(`${redis.namespace}:manual-before`, { mitigation: 'local_cache' })).status,
    ).toBe(201)

    await server.postgres.stopServer()
    const stoppedAt = Date.now()
    for (const replica of replicas) {
      const write = await timed(() =>
        replica.promote(`${redis.namespace}:during`, { mitigation: 'local_cache' }),
      )
      expect(write.result.status).toBe(503)
      expect(write.ms).toBeLessThan(WRITE_FAILS_WITHIN_MS)
      const ready = await timed(() => replica.getJson<{ checks: Record<string, string> }>('/readyz'))
      expect(ready.result.status).toBe(503)
      expect(ready.result.body.checks.postgres).toMatch(/^failed/)
      expect(ready.ms).toBeLessThan(READYZ_FAILS_WITHIN_MS)
    }
    // Reads that need the registry fail the same way; liveness is unaffected.
    expect((await first.getJson('/hotkeys')).status).toBe(503)
    expect(await first.status('/healthz')).toBe(200)

    // Keys go hot while the registry is down: the detectors keep the promotions and retry them.
    const hot = [`${redis.namespace}:auto-1`, `${redis.namespace}:auto-2`]
    const window = Math.floor(Date.now() / 1000) * 1000
    await sendReport(admin, names, makeReport('agent-1', window, { [hot[0] as string]: 1500 }))
    await sendReport(admin, names, makeReport('agent-2', window, { [hot[1] as string]: 1200 }))
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(await first.metric('heatsink_registry_write_failures_total')).toBeGreaterThan(0)

    await server.postgres.startServer()
    const startedAt = Date.now()
    console.log(`[faults] postgres down for ${startedAt - stoppedAt} ms`)
    for (const replica of replicas) {
      await until('/readyz 200', async () => (await replica.status('/readyz')) === 200, 10_000)
    }
    await until(
      'the promotions made during the outage',
      async () => {
        const listed = await second.hotKeys().catch((): string[] => [])
        return hot.every((key) => listed.includes(key))
      },
      10_000,
    )
    console.log(`[faults] outage promotions landed ${Date.now() - startedAt} ms after Postgres came back`)
    expect((await second.promote(`${redis.namespace}:manual-after`, { mitigation: 'coalesce' })).status).toBe(
      201,
    )

    // Versions: one per change, 1..N in Postgres with no gap, each published once and in order.
    const client = new pg.Client({ connectionString: postgres.url })
    await client.connect()
    const { rows } = await client.query<{ version: string; raw_key: string }>(
      'SELECT version, raw_key FROM hot_key_events ORDER BY version',
    )
    await client.end()
    const versions = rows.map((row) => Number(row.version))
    expect(versions).toEqual([1, 2, 3, 4])
    expect(rows.map((row) => row.raw_key).sort()).toEqual(
      [`${redis.namespace}:manual-before`, ...hot, `${redis.namespace}:manual-after`].sort(),
    )
    await until('every version published', () => published.length === 4)
    expect(published).toEqual([1, 2, 3, 4])
  }, 60_000)
})
