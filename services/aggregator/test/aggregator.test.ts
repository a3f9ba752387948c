import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@heatsink/devservices'
import { decodeRegistryEvent, keyHash, type RegistryEvent } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { createPgliteDatabase, IN_MEMORY } from '../src/db/pglite-database.js'
import { MigrationError } from '../src/errors.js'
import { recordChannel, testConfig, until } from './support/fixtures.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

const running: Aggregator[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((aggregator) => aggregator.stop()))
})

function replica(env: Record<string, string> = {}): Aggregator {
  const aggregator = createAggregator(
    testConfig({ DATABASE_URL: postgres().url, HEATSINK_NAMESPACE: redis().namespace, ...env }),
  )
  running.push(aggregator)
  return aggregator
}

// node:http sends the path exactly as written; fetch would normalize `%2E` away as a dot segment.
function send(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base)
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

describe('createAggregator', () => {
  it('carries a promotion and a demotion through HTTP, Postgres and pub/sub, and a second replica never republishes', async () => {
    const first = replica({ HEATSINK_REPLICA_ID: 'one' })
    await first.start()
    const base = first.url() ?? ''
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const messages = await recordChannel(redis().client(), first.names.registryChannel)
    const events = () => messages.map((text) => decodeRegistryEvent(text))
    const versionInRedis = async () =>
      Number(await redis().client().hget(first.names.registrySnapshotKey, 'version'))

    const key = 'cart:42/items'
    const promoted = await send(base, 'POST', `/hotkeys/${encodeURIComponent(key)}/promote`, {
      mitigation: 'split',
      splitFactor: 4,
    })
    expect(promoted.status).toBe(201)
    expect(JSON.parse(promoted.body)).toMatchObject({ key, splitFactor: 4, version: 1 })

    const row = await postgres().pool.query('SELECT raw_key, status, source, version FROM hot_key_registry')
    expect(row.rows).toEqual([{ raw_key: key, status: 'active', source: 'manual', version: '1' }])
    const audit = await postgres().pool.query('SELECT version, type, actor FROM hot_key_events')
    expect(audit.rows).toEqual([{ version: '1', type: 'promote', actor: 'api' }])
    await until('the promote event', () => messages.length === 1)
    expect(events()[0]).toMatchObject({ type: 'promote', version: 1, entry: { key, keyHash: keyHash(key) } })
    expect(await versionInRedis()).toBe(1)

    expect((await send(base, 'DELETE', `/hotkeys/${encodeURIComponent(key)}`)).status).toBe(204)
    await until('the demote event', () => messages.length === 2)
    expect(events()[1]).toEqual({
      v: 1,
      kind: 'registry',
      type: 'demote',
      version: 2,
      at: expect.any(Number),
      key,
      keyHash: keyHash(key),
      reason: 'demoted through the API',
    } satisfies RegistryEvent)
    expect(await first.registry.snapshot()).toMatchObject({ version: 2, entries: [] })
    expect(await versionInRedis()).toBe(2)

    // A second replica starts (its start-up flush finds nothing new) and flushes again: nothing is republished.
    const second = replica({ HEATSINK_REPLICA_ID: 'two' })
    await second.start()
    expect(await second.publisher.flush()).toEqual({ version: 2, published: [] })
    // A change through the second replica is published once, whichever replica flushes.
    const dot = await send(second.url() ?? '', 'POST', '/hotkeys/%2E/promote', { mitigation: 'local_cache' })
    expect(dot.status).toBe(201)
    expect(JSON.parse(dot.body)).toMatchObject({ key: '.', version: 3 })
    expect(await first.publisher.flush()).toEqual({ version: 3, published: [] })
    await until('the third event', () => messages.length === 3)
    expect(events().map((event) => event.version)).toEqual([1, 2, 3])

    const ready = await send(base, 'GET', '/readyz')
    expect(JSON.parse(ready.body)).toEqual({
      status: 'ready',
      checks: { redis: 'ok', postgres: 'ok', migrations: 'ok', ingest: 'ok' },
    })
    const metrics = await send(base, 'GET', '/metrics')
    expect(metrics.body).toContain('heatsink_registry_events_published_total{type="promote"} 1')
    expect(metrics.body).toContain('heatsink_registry_events_published_total{type="demote"} 1')
  })

  it('starts added components after the registry and before HTTP, and stops them together with HTTP', async () => {
    const aggregator = replica()
    const seen: string[] = []
    let release = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    aggregator.addComponent({
      name: 'ingest',
      start: async () => {
        seen.push(`start: listening=${aggregator.url() !== undefined}`)
        await aggregator.registry.list()
      },
      stop: async () => {
        seen.push(`stop: listening=${aggregator.app.server.listening}`)
        await released
        seen.push(`stopped: redis=${aggregator.redis.status}`)
      },
    })
    await aggregator.start()
    expect(() =>
      aggregator.addComponent({ name: 'late', start: async () => {}, stop: async () => {} }),
    ).toThrow()
    const stopped = aggregator.stop()
    // HTTP closes while the ingest component is still stopping: neither waits for the other to drain.
    await until('HTTP closed', () => !aggregator.app.server.listening)
    release()
    await stopped
    await aggregator.stop()

    // What both use (Redis) is closed only after both stopped.
    expect(seen).toEqual(['start: listening=false', 'stop: listening=true', 'stopped: redis=ready'])
    expect(aggregator.redis.status).toBe('end')
  })

  it('fails to start, releasing what it opened, when Postgres cannot be reached', async () => {
    const nothing = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`
    const aggregator = replica({ DATABASE_URL: nothing })

    await expect(aggregator.start()).rejects.toBeInstanceOf(MigrationError)
    expect(aggregator.redis.status).toBe('end')
    expect(aggregator.url()).toBeUndefined()
  })
})

describe('createAggregator without DATABASE_URL', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it('keeps the registry in an embedded PGlite data directory across restarts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'heatsink-pglite-'))
    dirs.push(dataDir)
    const env = { HEATSINK_NAMESPACE: redis().namespace, HEATSINK_DATA_DIR: dataDir }
    const start = async () => {
      const aggregator = createAggregator(testConfig({ ...env, DATABASE_URL: '' }))
      running.push(aggregator)
      await aggregator.start()
      return aggregator
    }

    const first = await start()
    expect(first.db.kind).toBe('pglite')
    const promoted = await send(first.url() ?? '', 'POST', '/hotkeys/user%2F7/promote', {
      mitigation: 'coalesce',
    })
    expect(promoted.status).toBe(201)
    await first.stop()

    const second = await start()
    const list = JSON.parse((await send(second.url() ?? '', 'GET', '/hotkeys')).body)
    expect(list.hotkeys).toMatchObject([{ key: 'user/7', mitigation: 'coalesce', version: 1 }])
    const next = await send(second.url() ?? '', 'POST', '/hotkeys/other/promote', {
      mitigation: 'local_cache',
    })
    expect(JSON.parse(next.body)).toMatchObject({ version: 2 })
    expect(Number(await redis().client().hget(second.names.registrySnapshotKey, 'version'))).toBe(2)
  })

  it('lets two replicas in one process share one embedded PGlite, which stays open for its owner', async () => {
    const db = createPgliteDatabase(IN_MEMORY)
    try {
      const env = { HEATSINK_NAMESPACE: redis().namespace, DATABASE_URL: '' }
      const replicas = [0, 1].map((i) =>
        createAggregator(testConfig({ ...env, HEATSINK_REPLICA_ID: `shared-${i}` }), { db }),
      )
      running.push(...replicas)
      for (const replica of replicas) await replica.start()
      const [a, b] = replicas as [Aggregator, Aggregator]
      expect(
        (await send(a.url() ?? '', 'POST', '/hotkeys/shared/promote', { mitigation: 'split' })).status,
      ).toBe(201)
      const listed = JSON.parse((await send(b.url() ?? '', 'GET', '/hotkeys')).body)
      expect(listed.hotkeys).toMatchObject([{ key: 'shared', version: 1 }])
      const next = await send(b.url() ?? '', 'POST', '/hotkeys/other/promote', { mitigation: 'coalesce' })
      expect(JSON.parse(next.body)).toMatchObject({ version: 2 })
      for (const replica of replicas) await replica.stop()
      expect(
        (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM hot_key_registry')).rows[0]?.n,
      ).toBe(2)
    } finally {
      await db.close()
    }
  })
})
