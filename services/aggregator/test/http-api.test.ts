// Longer than 300 lines: every route group of the REST API tested through app.inject() on one fixture (a fresh
// registry per case, fixed live traffic, the api() and promote() helpers at the top).
import SwaggerParser from '@apidevtools/swagger-parser'
import { keyHash } from '@heatsink/protocol'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ApiServer, buildApi } from '../src/http/app.js'
import type { ReadinessProbe } from '../src/http/ops-routes.js'
import { createMetrics } from '../src/metrics.js'
import { RegistryService } from '../src/registry/registry-service.js'
import type { KeyStats, TrafficReader } from '../src/traffic-reader.js'
import { ManualClock, openPostgres, type TestDatabase } from './support/fixtures.js'

// Fixed live traffic for two keys; the routes' logic is what is tested, the reader is the ingest side's.
const LIVE: Record<string, KeyStats> = {
  'product:1': {
    requestsPerSecond: 1500,
    hitRate: 0.98,
    localCacheHitRatio: 0.9,
    coalesceCollapseRatio: null,
    splitShardCounts: [],
    agents: 3,
  },
  'traffic:only': {
    requestsPerSecond: 40,
    hitRate: null,
    localCacheHitRatio: null,
    coalesceCollapseRatio: null,
    splitShardCounts: [10, 12],
    agents: 1,
    sketchError: { agents: 1, meanRelativeError: 0.02, maxRelativeError: 0.02 },
    commandForms: ['counter-write', 'get'],
    splitKind: 'counter',
  },
}
const traffic: TrafficReader = {
  requestsPerSecond: async (key) => LIVE[key]?.requestsPerSecond ?? null,
  keyStats: async (key) => LIVE[key],
}

const TOKEN = 's3cret-token'

const path = (key: string, suffix = '') => `/hotkeys/${encodeURIComponent(key)}${suffix}`

describe('REST API', () => {
  let postgres: TestDatabase
  let clock: ManualClock
  let registry: RegistryService
  let apps: ApiServer[]

  const api = (options: { apiToken?: string | null; probes?: ReadinessProbe[] } = {}) => {
    const app = buildApi({
      registry,
      traffic,
      metrics: createMetrics(),
      probes: options.probes ?? [],
      apiToken: options.apiToken ?? null,
    })
    apps.push(app)
    return app
  }
  const promote = (app: ApiServer, key: string, payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: path(key, '/promote'), payload: payload as object, headers })

  beforeEach(async () => {
    postgres = await openPostgres()
    clock = new ManualClock(Date.parse('2026-01-02T03:04:05.678Z'))
    registry = new RegistryService(postgres.db, { clock })
    apps = []
  })
  afterEach(async () => {
    await Promise.all(apps.map((app) => app.close()))
    await postgres.cleanup()
  })

  describe('hot keys', () => {
    it('promotes a key to replica_read, kept in Postgres and listed as such', async () => {
      const app = api()
      const created = await promote(app, 'feed:big', { mitigation: 'replica_read' })
      expect(created.statusCode).toBe(201)
      expect(created.json()).toMatchObject({ key: 'feed:big', mitigation: 'replica_read', splitFactor: 1 })
      expect(await registry.get('feed:big')).toMatchObject({ mitigation: 'replica_read' })
      expect((await app.inject({ url: '/hotkeys' })).json().hotkeys).toMatchObject([
        { key: 'feed:big', mitigation: 'replica_read' },
      ])
    })

    it('promotes (201), lists with live rates and ISO times, re-promotes (200), and demotes (204, then 404)', async () => {
      const app = api()
      expect((await app.inject({ url: '/hotkeys' })).json()).toEqual({ hotkeys: [] })

      const created = await promote(app, 'product:1', { mitigation: 'local_cache', ttlSeconds: 60 })
      expect(created.statusCode).toBe(201)
      const entry = {
        key: 'product:1',
        keyHash: keyHash('product:1'),
        mitigation: 'local_cache',
        splitFactor: 1,
        ttlSeconds: 60,
        status: 'active',
        source: 'manual',
        detectedAt: '2026-01-02T03:04:05.678Z',
        expiresAt: '2026-01-02T03:05:05.678Z',
        requestsPerSecond: 1500,
        version: 1,
      }
      expect(created.json()).toEqual(entry)
      expect((await app.inject({ url: '/hotkeys' })).json()).toEqual({ hotkeys: [entry] })

      const updated = await promote(app, 'product:1', { mitigation: 'split', splitFactor: 8 })
      expect(updated.statusCode).toBe(200)
      expect(updated.json()).toMatchObject({
        mitigation: 'split',
        splitFactor: 8,
        ttlSeconds: null,
        version: 2,
      })
      const unchanged = await promote(app, 'product:1', { mitigation: 'split', splitFactor: 8 })
      expect(unchanged.statusCode).toBe(200)
      expect(unchanged.json()).toMatchObject({ version: 2 })

      const deleted = await app.inject({ method: 'DELETE', url: path('product:1') })
      expect(deleted.statusCode).toBe(204)
      expect(deleted.body).toBe('')
      const again = await app.inject({ method: 'DELETE', url: path('product:1') })
      expect(again.statusCode).toBe(404)
      expect(again.json()).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: 'key "product:1" is not in the registry',
      })
      expect((await app.inject({ url: '/hotkeys' })).json()).toEqual({ hotkeys: [] })
    })

    it.each([
      ['a slash', 'user/42'],
      ['a slash before a route word', 'a/stats'],
      ['colons', 'tenant:7:cart:{abc}'],
      ['a percent sign', '100%'],
      ['an encoded-looking sequence', '%2F%25'],
      ['spaces', 'with  two spaces '],
      ['non-ASCII', 'ключ-é-🔥'],
      ['query and fragment characters', 'a?b=c&d#e'],
      ['dot segments inside', '../etc/passwd'],
      ['a plus and a semicolon', 'a+b;c'],
    ])('round-trips a key with %s exactly', async (_, key) => {
      const app = api()
      const created = await promote(app, key, { mitigation: 'coalesce' })
      expect(created.statusCode).toBe(201)
      expect(created.json()).toMatchObject({ key, keyHash: keyHash(key) })
      expect(
        (await app.inject({ url: '/hotkeys' })).json().hotkeys.map((h: { key: string }) => h.key),
      ).toEqual([key])
      expect((await app.inject({ url: path(key, '/stats') })).json()).toMatchObject({ key })
      expect(await registry.get(key)).toMatchObject({ key })
      expect((await app.inject({ method: 'DELETE', url: path(key) })).statusCode).toBe(204)
      expect(await registry.get(key)).toBeUndefined()
    })

    it('accepts a key of exactly 1024 UTF-8 bytes and rejects a longer one, naming key', async () => {
      const app = api()
      expect((await promote(app, 'é'.repeat(512), { mitigation: 'local_cache' })).statusCode).toBe(201)

      const tooLong = await promote(app, `${'é'.repeat(512)}x`, { mitigation: 'local_cache' })
      expect(tooLong.statusCode).toBe(400)
      expect(tooLong.json()).toEqual({
        statusCode: 400,
        code: 'FST_ERR_VALIDATION',
        error: 'Bad Request',
        message: 'params/key must be at most 1024 bytes of UTF-8',
      })
      const deleteLong = await app.inject({ method: 'DELETE', url: path('k'.repeat(1025)) })
      expect(deleteLong.statusCode).toBe(400)
      expect(deleteLong.json().message).toBe('params/key must be at most 1024 bytes of UTF-8')
    })

    it.each([
      [{ mitigation: 'split', splitFactor: 3 }, 'body/splitFactor must be a power of two from 1 to 1024'],
      [{ mitigation: 'split', splitFactor: 2048 }, 'body/splitFactor must be a power of two from 1 to 1024'],
      [{ mitigation: 'split', splitFactor: 0 }, 'body/splitFactor must be a power of two from 1 to 1024'],
      [{ mitigation: 'split', splitFactor: 2.5 }, 'body/splitFactor must be a power of two from 1 to 1024'],
      [{ mitigation: 'split', splitFactor: '8' }, 'body/splitFactor must be a power of two from 1 to 1024'],
      // Only split takes a factor: it is refused, not stored where nothing applies it.
      [
        { mitigation: 'local_cache', splitFactor: 8 },
        'body/splitFactor must be 1 unless mitigation is split',
      ],
      [{ mitigation: 'coalesce', splitFactor: 2 }, 'body/splitFactor must be 1 unless mitigation is split'],
      [
        { mitigation: 'local_cache', ttlSeconds: 0 },
        'body/ttlSeconds must be a positive integer of at most 2147483647',
      ],
      [
        { mitigation: 'local_cache', ttlSeconds: 1.5 },
        'body/ttlSeconds must be a positive integer of at most 2147483647',
      ],
      [{ mitigation: 'evict' }, 'body/mitigation must be one of local_cache, split, coalesce, replica_read'],
      [{ splitFactor: 2 }, 'body/mitigation is required'],
      [{ mitigation: 'split', splitfactor: 4 }, 'body has unknown field(s) splitfactor'],
      [[], 'body must be a JSON object with a mitigation'],
    ])('answers %j with 400 naming the field', async (payload, message) => {
      const response = await promote(api(), 'k', payload)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({
        statusCode: 400,
        code: 'FST_ERR_VALIDATION',
        error: 'Bad Request',
        message,
      })
      expect(await registry.known('k')).toBe(false)
    })

    it('answers malformed JSON with 400 and an unknown route with 404, in Fastify shape', async () => {
      const app = api()
      const malformed = await app.inject({
        method: 'POST',
        url: path('k', '/promote'),
        headers: { 'content-type': 'application/json' },
        payload: '{"mitigation": ',
      })
      expect(malformed.statusCode).toBe(400)
      expect(malformed.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' })
      expect(malformed.json().message).toMatch(/JSON/)

      const unknown = await app.inject({ url: '/hotkey' })
      expect(unknown.statusCode).toBe(404)
      expect(unknown.json()).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: 'Route GET:/hotkey not found',
      })
    })

    it('answers 409 when another registered key holds the key hash, and changes nothing', async () => {
      const app = api()
      expect((await promote(app, 'first', { mitigation: 'local_cache' })).statusCode).toBe(201)
      // A 64-bit collision cannot be searched for in a test, so the stored row is given the other key's hash.
      await postgres.db.query('UPDATE hot_key_registry SET key_hash = $1 WHERE key_hash = $2', [
        keyHash('second'),
        keyHash('first'),
      ])
      const conflict = await promote(app, 'second', { mitigation: 'split', splitFactor: 2 })
      expect(conflict.statusCode).toBe(409)
      expect(conflict.json()).toEqual({
        statusCode: 409,
        code: 'E_KEY_HASH_COLLISION',
        error: 'Conflict',
        message: `key hash ${keyHash('second')} of "second" is already taken by "first"`,
      })
      expect((await app.inject({ url: '/hotkeys' })).json().hotkeys).toEqual([
        expect.objectContaining({ key: 'first', mitigation: 'local_cache' }),
      ])
    })
  })

  describe('stats', () => {
    it('serves live stats, nulls for a registry key without traffic, and 404 for a key never seen', async () => {
      const app = api()
      const live = await app.inject({ url: path('traffic:only', '/stats') })
      expect(live.statusCode).toBe(200)
      // No contention reader here: none aborted (write-contention.test.ts in test/e2e counts real ones).
      expect(live.json()).toEqual({
        key: 'traffic:only',
        ...LIVE['traffic:only'],
        watchAbortsPerSecond: 0,
        contended: false,
      })

      await registry.promote({
        key: 'quiet',
        mitigation: 'local_cache',
        source: 'auto',
        actor: 'd',
        reason: 'h',
      })
      await registry.demote('quiet', { actor: 'd', reason: 'cooled' })
      const demoted = await app.inject({ url: path('quiet', '/stats') })
      expect(demoted.statusCode).toBe(200)
      expect(demoted.json()).toEqual({
        key: 'quiet',
        requestsPerSecond: null,
        hitRate: null,
        localCacheHitRatio: null,
        coalesceCollapseRatio: null,
        splitShardCounts: [],
        agents: 0,
        sketchError: null,
        commandForms: [],
        splitKind: null,
        watchAbortsPerSecond: 0,
        contended: false,
      })

      const never = await app.inject({ url: path('never/seen', '/stats') })
      expect(never.statusCode).toBe(404)
      expect(never.json().message).toBe('key "never/seen" has never been seen by the control plane')
    })
  })

  describe('with HEATSINK_API_TOKEN', () => {
    it('needs the bearer token for POST and DELETE, not for reads', async () => {
      const app = api({ apiToken: TOKEN })
      const refused: Record<string, string>[] = [
        {},
        { authorization: 'Bearer wrong' },
        { authorization: `Bearer ${TOKEN}x` },
        { authorization: TOKEN },
      ]
      for (const headers of refused) {
        const response = await promote(app, 'k', { mitigation: 'local_cache' }, headers)
        expect(response.statusCode).toBe(401)
        expect(response.headers['www-authenticate']).toBe('Bearer realm="heatsink"')
        expect(response.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' })
      }
      expect(await registry.known('k')).toBe(false)

      const authorized = { authorization: `Bearer ${TOKEN}` }
      expect((await promote(app, 'k', { mitigation: 'local_cache' }, authorized)).statusCode).toBe(201)
      expect((await app.inject({ url: '/hotkeys' })).json().hotkeys).toHaveLength(1)
      expect((await app.inject({ method: 'DELETE', url: path('k') })).statusCode).toBe(401)
      expect((await app.inject({ method: 'DELETE', url: path('k'), headers: authorized })).statusCode).toBe(
        204,
      )
    })
  })

  describe('operations', () => {
    it('answers /healthz, and /readyz with which check failed', async () => {
      let postgresUp = true
      const probes: ReadinessProbe[] = [
        { name: 'redis', check: async () => {} },
        {
          name: 'postgres',
          check: async () => {
            if (!postgresUp) throw new Error('connect ECONNREFUSED 127.0.0.1:5432')
          },
        },
        { name: 'migrations', check: () => new Promise(() => {}) },
      ]
      const app = buildApi({
        registry,
        traffic,
        metrics: createMetrics(),
        probes,
        probeTimeoutMs: 50,
        apiToken: null,
      })
      apps.push(app)
      expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' })
      const unready = await app.inject({ url: '/readyz' })
      expect(unready.statusCode).toBe(503)
      // A probe that never answers fails on its timeout instead of hanging the check.
      expect(unready.json()).toEqual({
        status: 'unready',
        checks: { redis: 'ok', postgres: 'ok', migrations: 'failed: no answer within 50 ms' },
      })

      probes[2] = { name: 'migrations', check: async () => {} }
      postgresUp = false
      const postgresDown = await app.inject({ url: '/readyz' })
      expect(postgresDown.statusCode).toBe(503)
      expect(postgresDown.json().checks).toEqual({
        redis: 'ok',
        postgres: 'failed: connect ECONNREFUSED 127.0.0.1:5432',
        migrations: 'ok',
      })

      postgresUp = true
      const ready = await app.inject({ url: '/readyz' })
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toEqual({
        status: 'ready',
        checks: { redis: 'ok', postgres: 'ok', migrations: 'ok' },
      })
    })

    it('serves Prometheus text on /metrics', async () => {
      const response = await api().inject({ url: '/metrics' })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toMatch(/^text\/plain/)
      expect(response.body).toContain('# TYPE heatsink_detection_latency_seconds histogram')
      expect(response.body).toContain('process_cpu_user_seconds_total')
    })
  })

  describe('docs', () => {
    it('serves a valid OpenAPI 3 document naming every route and the promote fields, and an HTML page', async () => {
      const app = api({ apiToken: TOKEN })
      const response = await app.inject({ url: '/docs/json' })
      expect(response.statusCode).toBe(200)
      const document = response.json()
      await SwaggerParser.validate(structuredClone(document))

      expect(document.openapi).toMatch(/^3\./)
      expect(Object.keys(document.paths).sort()).toEqual([
        '/healthz',
        '/hotkeys',
        '/hotkeys/{key}',
        '/hotkeys/{key}/promote',
        '/hotkeys/{key}/stats',
        '/metrics',
        '/readyz',
      ])
      const promoteOp = document.paths['/hotkeys/{key}/promote'].post
      expect(promoteOp.security).toEqual([{ bearerAuth: [] }])
      expect(Object.keys(promoteOp.responses).sort()).toEqual(['200', '201', '400', '401', '409', '503'])
      const body = promoteOp.requestBody.content['application/json'].schema
      expect(Object.keys(body.properties).sort()).toEqual(['mitigation', 'splitFactor', 'ttlSeconds'])
      expect(body.required).toEqual(['mitigation'])
      expect(body.properties.mitigation.enum).toEqual(['local_cache', 'split', 'coalesce', 'replica_read'])
      expect(document.paths['/hotkeys/{key}'].delete.parameters).toEqual([
        expect.objectContaining({ name: 'key', in: 'path', required: true }),
      ])

      const page = await app.inject({ url: '/docs' })
      const html = page.statusCode === 302 ? await app.inject({ url: page.headers.location as string }) : page
      expect(html.statusCode).toBe(200)
      expect(html.headers['content-type']).toMatch(/^text\/html/)
      expect(html.body).toContain('swagger-ui')
    })
  })
})
