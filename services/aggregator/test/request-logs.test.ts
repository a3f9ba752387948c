import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { type Logger, pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createAggregator } from '../src/aggregator.js'
import { Detector } from '../src/detection/detector.js'
import { DEFAULT_MITIGATION_POLICY } from '../src/detection/mitigation-policy.js'
import { type ApiServer, buildApi } from '../src/http/app.js'
import { createMetrics } from '../src/metrics.js'
import { RegistryService } from '../src/registry/registry-service.js'
import { NO_TRAFFIC } from '../src/traffic-reader.js'
import { openPostgres, type TestDatabase, testConfig, until } from './support/fixtures.js'
import { makeReport, sendReport } from './support/reports.js'

const NO_FORMS = { seen: async () => 0 }

const redis = useTestRedis()
const testPostgres = useTestPostgres()

/** One pino line as written: level number, message, and the fields. */
type Line = Record<string, unknown> & { level: number; msg: string }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const INFO = 30
const DEBUG = 20

/** A pino logger at `level` whose lines land, parsed, in `lines`: what an operator's log pipeline receives. */
function capturingLogger(level: string): { log: Logger; lines: Line[] } {
  const lines: Line[] = []
  const log = pino({ level }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) })
  return { log, lines }
}

describe('request logs', () => {
  let postgres: TestDatabase
  let registry: RegistryService
  let apps: ApiServer[]

  const api = (log: Logger) => {
    const app = buildApi({
      registry,
      traffic: NO_TRAFFIC,
      metrics: createMetrics(),
      probes: [{ name: 'postgres', check: async () => void (await postgres.db.query('SELECT 1')) }],
      apiToken: null,
      log,
    })
    apps.push(app)
    return app
  }

  beforeEach(async () => {
    postgres = await openPostgres()
    // The registry has no logger of its own: a change's line can only come from the logger it was handed.
    registry = new RegistryService(postgres.db)
    apps = []
  })
  afterEach(async () => {
    await Promise.all(apps.map((app) => app.close()))
    await postgres.cleanup()
  })

  it('gives each request a fresh UUID, returns it in x-request-id, and puts it on every line of the request', async () => {
    const { log, lines } = capturingLogger('info')
    const app = api(log)
    const first = await app.inject({ url: '/hotkeys' })
    const second = await app.inject({ url: '/no/such/route' })

    const ids = [first.headers['x-request-id'], second.headers['x-request-id']]
    expect(ids[0]).toMatch(UUID)
    expect(ids[1]).toMatch(UUID)
    expect(ids[0]).not.toBe(ids[1])
    expect(second.statusCode).toBe(404)
    expect(lines.map((line) => [line.reqId, line.msg])).toEqual([
      [ids[0], 'incoming request'],
      [ids[0], 'request completed'],
      [ids[1], 'incoming request'],
      [ids[1], 'Route GET:/no/such/route not found'],
      [ids[1], 'request completed'],
    ])
  })

  it("keeps a caller's acceptable x-request-id, and replaces one that is too long or not printable ASCII", async () => {
    const { log, lines } = capturingLogger('info')
    const app = api(log)
    const gateways = ['Root=1-67a3-abc;Parent=53995c3f', 'k'.repeat(128)]
    for (const given of gateways) {
      const reply = await app.inject({ url: '/hotkeys', headers: { 'x-request-id': given } })
      expect(reply.headers['x-request-id']).toBe(given)
    }
    for (const refused of ['k'.repeat(129), 'two words', 'caf\u00e9', '']) {
      const reply = await app.inject({ url: '/hotkeys', headers: { 'x-request-id': refused } })
      expect(reply.headers['x-request-id']).toMatch(UUID)
    }
    const [trace, longest] = gateways
    expect(lines.slice(0, 4).map((line) => line.reqId)).toEqual([trace, trace, longest, longest])
  })

  it('logs a promotion and a demotion made through the API with the request id of the call', async () => {
    const { log, lines } = capturingLogger('info')
    const app = api(log)
    const promoted = await app.inject({
      method: 'POST',
      url: '/hotkeys/product%3A7/promote',
      headers: { 'x-request-id': 'promote-call-1' },
      payload: { mitigation: 'local_cache' },
    })
    expect(promoted.statusCode).toBe(201)
    const demoted = await app.inject({
      method: 'DELETE',
      url: '/hotkeys/product%3A7',
      headers: { 'x-request-id': 'demote-call-2' },
    })
    expect(demoted.statusCode).toBe(204)

    expect(lines.find((line) => line.msg === 'promoted')).toMatchObject({
      level: INFO,
      reqId: 'promote-call-1',
      key: 'product:7',
      source: 'manual',
    })
    expect(lines.find((line) => line.msg === 'demoted')).toMatchObject({
      level: INFO,
      reqId: 'demote-call-2',
      key: 'product:7',
      actor: 'api',
    })
    // Every line written while each call ran carries its id.
    expect(lines.map((line) => line.reqId)).toEqual([
      ...Array(3).fill('promote-call-1'),
      ...Array(3).fill('demote-call-2'),
    ])
  })

  it('logs an automatic promotion with the window that crossed instead of a request id', async () => {
    const { log, lines } = capturingLogger('info')
    const detector = new Detector({
      registry,
      policy: DEFAULT_MITIGATION_POLICY,
      // No crossing here is write-hot, so no command forms are asked for.
      forms: NO_FORMS,
      windowMs: 1000,
      hotRps: 1000,
      replicaId: 'replica-a',
      log,
    })
    const windowStart = 1_767_225_600_000
    await detector.onCrossings([{ key: 'feed:home', count: 1500, writes: 0, misses: 0, windowStart }])

    const promoted = lines.filter((line) => line.msg === 'promoted')
    expect(promoted).toHaveLength(2)
    for (const line of promoted) {
      expect(line).toMatchObject({ level: INFO, key: 'feed:home', window: windowStart })
      expect(line).not.toHaveProperty('reqId')
    }
    expect(promoted[0]).toMatchObject({ source: 'auto', type: 'promote' })
  })

  it('logs probes and scrapes at debug, so an info log shows only the API calls', async () => {
    const quiet = capturingLogger('info')
    const app = api(quiet.log)
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      const reply = await app.inject({ url })
      expect([url, reply.statusCode]).toEqual([url, 200])
      expect(reply.headers['x-request-id']).toMatch(UUID)
    }
    expect(quiet.lines).toEqual([])

    const verbose = capturingLogger('debug')
    const debugApp = api(verbose.log)
    await debugApp.inject({ url: '/healthz' })
    await debugApp.inject({ url: '/hotkeys' })
    expect(verbose.lines.map((line) => [line.level, line.msg, (line.req as { url?: string })?.url])).toEqual([
      [DEBUG, 'incoming request', '/healthz'],
      [DEBUG, 'request completed', undefined],
      [INFO, 'incoming request', '/hotkeys'],
      [INFO, 'request completed', undefined],
    ])
  })

  it('logs the cool-down demotion of an automatic promotion with its window and replica, on a running aggregator', async () => {
    const { log, lines } = capturingLogger('info')
    const aggregator = createAggregator(
      testConfig({
        DATABASE_URL: testPostgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_REPLICA_ID: 'replica-logs',
        HEATSINK_COOL_SECONDS: '1',
      }),
      { log },
    )
    await aggregator.start()
    try {
      const windowStart = Math.floor(Date.now() / 1000) * 1000
      await sendReport(
        redis().client(),
        aggregator.names,
        makeReport('agent-1', windowStart, { 'cooling:key': 1500 }),
      )
      const changeLines = () => lines.filter((line) => line.msg === 'promoted' || line.msg === 'demoted')
      // The sweeper's own line comes last, after the registry's `demoted`.
      const swept = () => lines.find((line) => line.msg === 'demoted after cooling down')
      await until('the key promoted and, once quiet, demoted', () => swept() !== undefined, 10_000)

      const [promoted, , demoted] = changeLines()
      expect(promoted).toMatchObject({
        msg: 'promoted',
        key: 'cooling:key',
        source: 'auto',
        window: windowStart,
      })
      expect(demoted).toMatchObject({ msg: 'demoted', key: 'cooling:key', actor: 'replica-logs' })
      expect(demoted?.window).toBeGreaterThanOrEqual(windowStart)
      for (const line of changeLines()) expect(line).not.toHaveProperty('reqId')
      expect(swept()?.window).toBe(demoted?.window)
    } finally {
      await aggregator.stop()
    }
  })
})
