import { ensureRedis, freePort, type RunningService, ServiceUnavailableError } from '@heatsink/devservices'
import { createNames, type HeatsinkNames } from '@heatsink/protocol'
import { createTestRedis, type TestRedis, useTestPostgres } from '@heatsink/test'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { loadConfig } from '../src/config.js'
import { silent, until } from './support/fixtures.js'
import { readiness, sampleSum, scrape } from './support/prometheus.js'
import { makeReport, sendReport } from './support/reports.js'

// FLUSHALL, CLIENT PAUSE and deleting streams would hit every other test file on the shared Redis, so this file
// runs its aggregators on a private redis-server of its own. Postgres is the shared one (a schema per test).
let server: RunningService | undefined
let unavailable = ''

beforeAll(async () => {
  try {
    server = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  } catch (error) {
    // Only where redis-server is not installed (Redis from a container): there is no private server to wipe.
    if (!(error instanceof ServiceUnavailableError)) throw error
    unavailable = error.message
  }
})

afterAll(async () => {
  await server?.stop()
})

const postgres = useTestPostgres()
const WINDOW_MS = 1000
const currentWindow = () => Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS

describe('an aggregator whose Redis loses its data', () => {
  let redis: TestRedis | undefined
  const started: Aggregator[] = []

  beforeEach((context) => {
    if (server === undefined) return context.skip(`no private redis-server: ${unavailable}`)
    redis = createTestRedis({ url: server.url })
  })

  afterEach(async () => {
    await Promise.all(started.splice(0).map((aggregator) => aggregator.stop()))
    await redis?.cleanup()
    redis = undefined
  })

  function fixture(): { redis: TestRedis; names: HeatsinkNames } {
    if (redis === undefined) throw new Error('no private Redis')
    return { redis, names: createNames(redis.namespace) }
  }

  async function startAggregator(env: Record<string, string> = {}): Promise<Aggregator> {
    const { redis } = fixture()
    const aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis.url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis.namespace,
        HEATSINK_HOT_RPS: '1000',
        HEATSINK_WINDOW_MS: String(WINDOW_MS),
        HEATSINK_REPLICA_ID: `replica-${started.length + 1}`,
        PORT: '0',
        ...env,
      }),
      { log: silent },
    )
    started.push(aggregator)
    await aggregator.start()
    return aggregator
  }

  async function total(replicas: readonly Aggregator[], metric: string, labels?: Record<string, string>) {
    let sum = 0
    for (const replica of replicas) sum += sampleSum(await scrape(replica), metric, labels)
    return sum
  }

  async function hotKeys(aggregator: Aggregator): Promise<string[]> {
    const reply = await aggregator.app.inject({ url: '/hotkeys' })
    return reply.json().hotkeys.map((entry: { key: string }) => entry.key)
  }

  // Ingest is running: a report below the threshold is read and counted.
  async function warmUp(replicas: readonly Aggregator[], agentId: string): Promise<void> {
    const { redis, names } = fixture()
    await sendReport(redis.client(), names, makeReport(agentId, currentWindow(), { 'warm:key': 10 }))
    await until(
      'the first report',
      async () => (await total(replicas, 'heatsink_ingest_reports_total')) === 1,
    )
  }

  it('after FLUSHALL, two replicas recreate each group once between them and promote a key made hot afterwards', async () => {
    const { redis, names } = fixture()
    const replicas = [await startAggregator(), await startAggregator()]
    await warmUp(replicas, 'agent-1')

    const admin = redis.client()
    await admin.flushall()
    const window = currentWindow()
    const sentAt = Date.now()
    await sendReport(admin, names, makeReport('agent-1', window, { 'after:flush': 1500 }))
    await until('the promotion', async () =>
      (await hotKeys(replicas[0] as Aggregator)).includes('after:flush'),
    )
    expect(Date.now() - sentAt).toBeLessThan(3000)

    expect(await replicas[0]?.detection.counters.read(['after:flush'], window)).toEqual([
      { count: 1500, writes: 0, misses: 0 },
    ])
    expect(await total(replicas, 'heatsink_ingest_reports_total')).toBe(2)
    // Every stream lost its group; each was recreated exactly once across the replicas (the other got BUSYGROUP).
    await until('every group recreated', async () => {
      const groups = await Promise.all(
        names.reportStreams.map((s) => admin.xinfo('GROUPS', s).catch(() => [])),
      )
      return groups.every((g) => (g as unknown[]).length === 1)
    })
    for (const stream of names.reportStreams) {
      expect(await total(replicas, 'heatsink_ingest_group_recreated_total', { stream })).toBe(1)
    }
    for (const replica of replicas) {
      expect(await readiness(replica)).toEqual({
        statusCode: 200,
        checks: { redis: 'ok', postgres: 'ok', migrations: 'ok', ingest: 'ok' },
      })
    }
  })

  it('after one report stream is deleted, recreates that stream group only and counts what arrives on it', async () => {
    const { redis, names } = fixture()
    const aggregator = await startAggregator()
    await warmUp([aggregator], 'agent-del')
    const stream = names.reportStreamFor('agent-del')
    const admin = redis.client()

    expect(await admin.del(stream)).toBe(1)
    const window = currentWindow()
    await sendReport(admin, names, makeReport('agent-del', window, { 'after:del': 1200 }))
    await until('the promotion', async () => (await hotKeys(aggregator)).includes('after:del'))

    expect(await aggregator.detection.counters.read(['after:del'], window)).toEqual([
      { count: 1200, writes: 0, misses: 0 },
    ])
    const metrics = await scrape(aggregator)
    expect(sampleSum(metrics, 'heatsink_ingest_reports_total')).toBe(2)
    expect(sampleSum(metrics, 'heatsink_ingest_group_recreated_total', { stream })).toBe(1)
    expect(sampleSum(metrics, 'heatsink_ingest_group_recreated_total')).toBe(1)
    // Acknowledged once its counts are in (the promotion is requested before the ack).
    await until('the report acknowledged', async () => {
      const [pending] = (await admin.xpending(stream, names.consumerGroup)) as [number]
      return pending === 0
    })
  })

  it('answers /readyz 503 naming the stream while its reads keep failing, and 200 once they succeed again', async () => {
    const { redis, names } = fixture()
    const stallMs = 600
    const aggregator = await startAggregator({ HEATSINK_INGEST_STALL_MS: String(stallMs) })
    expect((await readiness(aggregator)).statusCode).toBe(200)
    const stream = names.reportStreamFor('agent-broken')
    const admin = redis.client()

    // A string where the stream was: every group read of it fails with WRONGTYPE, and no group can fix that.
    await admin.set(stream, 'not a stream')
    const brokenAt = Date.now()
    expect((await readiness(aggregator)).statusCode).toBe(200)
    let unready = await readiness(aggregator)
    while (unready.statusCode === 200) {
      if (Date.now() - brokenAt > 5000) throw new Error('/readyz still 200 after 5 s of failing reads')
      await new Promise((r) => setTimeout(r, 50))
      unready = await readiness(aggregator)
    }
    expect(Date.now() - brokenAt).toBeGreaterThanOrEqual(stallMs)
    expect(unready.statusCode).toBe(503)
    expect(unready.checks).toMatchObject({ redis: 'ok', postgres: 'ok', migrations: 'ok' })
    expect(unready.checks.ingest).toMatch(
      new RegExp(`^failed: ${stream}: reads failing for \\d+ ms \\(WRONGTYPE Operation against a key`),
    )
    // Only the broken stream is named.
    expect(unready.checks.ingest?.split('; ')).toHaveLength(1)

    await admin.del(stream)
    const fixedAt = Date.now()
    await until('/readyz 200', async () => (await readiness(aggregator)).statusCode === 200)
    expect(Date.now() - fixedAt).toBeLessThan(2000)
    expect((await readiness(aggregator)).checks.ingest).toBe('ok')
    await sendReport(admin, names, makeReport('agent-broken', currentWindow(), { 'after:repair': 1100 }))
    await until('the promotion', async () => (await hotKeys(aggregator)).includes('after:repair'))
    expect(sampleSum(await scrape(aggregator), 'heatsink_ingest_group_recreated_total', { stream })).toBe(1)
  })

  it('answers /readyz 503 while a paused server holds the reads unanswered, and 200 after', async () => {
    const { redis } = fixture()
    const stallMs = 500
    const aggregator = await startAggregator({ HEATSINK_INGEST_STALL_MS: String(stallMs) })
    const admin = redis.client()
    // Writes, XREADGROUP among them, wait; the reads fail nothing, they just get no answer.
    await admin.client('PAUSE', 4000, 'WRITE')
    try {
      // At most one blocking read (1 s) in flight when the pause began, plus the bound, plus one block.
      await until(
        '/readyz 503',
        async () => (await readiness(aggregator)).statusCode === 503,
        3 * WINDOW_MS + stallMs + 1000,
      )
      const unready = await readiness(aggregator)
      expect(unready.checks.ingest).toMatch(/^failed: .*: no read completed for \d+ ms/)
    } finally {
      await admin.client('UNPAUSE')
    }
    await until('/readyz 200', async () => (await readiness(aggregator)).statusCode === 200, 3000)
    expect((await readiness(aggregator)).checks.ingest).toBe('ok')
  })
})
