import { CommandForm } from '@heatsink/commands'
import { createNames, decodeRegistryEvent, type RegistryEvent } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { loadConfig } from '../src/config.js'
import { ChaosProxy } from './support/chaos-proxy.js'
import { silent } from './support/fixtures.js'
import { makeReport, sendReport } from './support/reports.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

const WINDOW_MS = 1000
// A counter's traffic: INCR and GET, the forms a split counter answers.
const COUNTER = CommandForm.counterWrite | CommandForm.get
const currentWindow = () => Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS

describe('detection on the running aggregator', () => {
  const started: Aggregator[] = []
  afterEach(async () => {
    await Promise.all(started.splice(0).map((a) => a.stop()))
  })

  async function startAggregator(
    env: Record<string, string> = {},
    databaseUrl = postgres().url,
    clock?: { now(): number },
  ) {
    const aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: databaseUrl,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_HOT_RPS: '1000',
        HEATSINK_COOL_RPS: '100',
        HEATSINK_COOL_SECONDS: '2',
        HEATSINK_WINDOW_MS: String(WINDOW_MS),
        HEATSINK_REPLICA_ID: `replica-${started.length + 1}`,
        PORT: '0',
        ...env,
      }),
      {
        log: silent,
        database: { connectionTimeoutMs: 500, queryTimeoutMs: 1000 },
        ...(clock ? { clock } : {}),
      },
    )
    started.push(aggregator)
    await aggregator.start()
    return aggregator
  }

  async function listen() {
    const events: Array<RegistryEvent & { receivedAt: number }> = []
    const subscriber = redis().client()
    await subscriber.subscribe(createNames(redis().namespace).registryChannel)
    subscriber.on('message', (_channel, message) =>
      events.push({ ...decodeRegistryEvent(message), receivedAt: Date.now() }),
    )
    return events
  }

  async function until<T>(
    check: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs = 8000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const value = await check()
      if (value) return value
      if (Date.now() > deadline) throw new Error('condition not met in time')
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  const names = () => createNames(redis().namespace)

  it('promotes on the report that takes the cluster-wide sum over the threshold, with the mitigation the traffic calls for', async () => {
    const aggregator = await startAggregator()
    const events = await listen()
    const client = redis().client()
    const window = currentWindow()
    await sendReport(
      client,
      names(),
      makeReport('agent-1', window, { 'post:viral': 400, 'likes:post:9': [700, 600, 0, COUNTER] }),
    )
    await sendReport(
      client,
      names(),
      makeReport('agent-2', window, { 'post:viral': 400, 'flash:sale': [600, 0, 200] }),
    )
    await until(async () => (await aggregator.metrics.ingestReports.get()).values[0]?.value === 2)
    expect(events).toEqual([])

    const sentAt = Date.now()
    await sendReport(
      client,
      names(),
      makeReport('agent-3', window, {
        'post:viral': 300,
        'likes:post:9': [400, 350, 0, COUNTER],
        'flash:sale': [500, 0, 150],
      }),
    )
    await until(() => events.length === 3)
    const byKey = new Map(events.map((e) => [e.type === 'demote' ? e.key : e.entry.key, e]))
    const viral = byKey.get('post:viral')
    // Promoted at once, by the crossing report: well within one window.
    expect((viral?.receivedAt ?? Number.POSITIVE_INFINITY) - sentAt).toBeLessThan(WINDOW_MS / 2)
    expect(viral).toMatchObject({ type: 'promote', entry: { mitigation: 'local_cache', source: 'auto' } })
    expect(byKey.get('likes:post:9')).toMatchObject({
      type: 'promote',
      entry: { mitigation: 'split', splitFactor: 2 },
    })
    expect(byKey.get('flash:sale')).toMatchObject({ type: 'promote', entry: { mitigation: 'coalesce' } })

    const audit = await postgres().pool.query(
      "SELECT actor, reason, requests_per_second FROM hot_key_events WHERE raw_key = 'post:viral'",
    )
    expect(audit.rows[0]).toMatchObject({ actor: 'replica-1', requests_per_second: 1100 })
    expect(audit.rows[0].reason).toContain('1100 req/s')

    // More reports in the same window do not promote again.
    await sendReport(client, names(), makeReport('agent-4', window, { 'post:viral': 500 }))
    await until(async () => (await aggregator.metrics.ingestReports.get()).values[0]?.value === 4)
    expect(events).toHaveLength(3)

    const latency = await aggregator.metrics.detectionLatency.get()
    expect(latency.values.find((v) => v.metricName?.endsWith('_count'))?.value).toBe(3)
    const stats = await aggregator.app.inject({ url: '/hotkeys/post%3Aviral/stats' })
    expect(stats.statusCode).toBe(200)
  })

  it('judges a partial report over a sliding second, so a surge that began late in the last window is promoted at once', async () => {
    const window = currentWindow()
    // 30% into the window: 70% of the previous window still lies within the last second.
    const aggregator = await startAggregator({}, postgres().url, { now: () => window + 300 })
    const events = await listen()
    const client = redis().client()
    await sendReport(
      client,
      names(),
      makeReport('agent-1', window - 1000, { 'late:surge': 900, steady: 600 }),
    )
    await until(async () => (await aggregator.metrics.ingestReports.get()).values[0]?.value === 1)
    await sendReport(
      client,
      names(),
      makeReport('agent-1', window, { 'late:surge': 500, steady: 550 }, { partial: true }),
    )
    // 500 + 0.7 x 900 = 1130 reaches 1000 req/s; 550 + 0.7 x 600 = 970 does not.
    const promoted = await until(() => events.find((e) => e.type === 'promote'))
    expect(promoted).toMatchObject({ entry: { key: 'late:surge', source: 'auto' } })
    await new Promise((r) => setTimeout(r, 300))
    expect(events).toHaveLength(1)
    const audit = await postgres().pool.query(
      "SELECT requests_per_second FROM hot_key_events WHERE raw_key = 'late:surge'",
    )
    expect(audit.rows[0].requests_per_second).toBe(1130)
  })

  it('keeps a key whose rate stays between the cool and hot rates, demotes it after cooling, never demotes a manual one', async () => {
    const aggregator = await startAggregator()
    const events = await listen()
    const client = redis().client()
    await sendReport(
      client,
      names(),
      makeReport('agent-1', currentWindow(), { warm: 1500, 'manual:key': 10 }),
    )
    await until(() => events.some((e) => e.type === 'promote'))
    const manual = await aggregator.app.inject({
      method: 'POST',
      url: '/hotkeys/manual%3Akey/promote',
      payload: { mitigation: 'local_cache' },
    })
    expect(manual.statusCode).toBe(201)

    // 3.5 s at 300 req/s: above the cool rate (100), below the hot rate (1000), longer than the cool period.
    const warmUntil = Date.now() + 3500
    while (Date.now() < warmUntil) {
      await sendReport(client, names(), makeReport('agent-1', currentWindow(), { warm: 300 }))
      await new Promise((r) => setTimeout(r, 250))
    }
    expect(events.filter((e) => e.type === 'demote')).toEqual([])

    // Then silence: demoted once the cool period has passed, plus the grace for late reports.
    const quietFrom = Date.now()
    const demote = await until(() => events.find((e) => e.type === 'demote'), 8000)
    expect(demote).toMatchObject({ type: 'demote', key: 'warm' })
    expect(demote.receivedAt - quietFrom).toBeGreaterThanOrEqual(1500)
    const listed = await aggregator.app.inject({ url: '/hotkeys' })
    expect(listed.json().hotkeys.map((h: { key: string }) => h.key)).toEqual(['manual:key'])
  })

  it('does not judge a fresh promotion on windows from before it, however late the sweep runs', async () => {
    // A loaded replica sweeps 1.4 s after the promotion: its newest complete window (grace 500 ms) is the
    // one before the promotion's, quiet only because the key was not hot yet.
    const window = currentWindow() - 10_000
    let now = window + 100
    await startAggregator({ HEATSINK_COOL_SECONDS: '1' }, postgres().url, {
      now: () => now,
    })
    const events = await listen()
    await sendReport(redis().client(), names(), makeReport('agent-1', window, { fresh: 1500 }))
    await until(() => events.some((e) => e.type === 'promote'))
    now = window + 1400
    await new Promise((r) => setTimeout(r, 3 * WINDOW_MS))
    expect(events.filter((e) => e.type === 'demote')).toEqual([])
    // Once the window after the promotion's is complete and quiet, the key is demoted.
    now = window + 2600
    const demote = await until(() => events.find((e) => e.type === 'demote'), 5000)
    expect(demote).toMatchObject({ type: 'demote', key: 'fresh' })
  })

  it('two replicas share the reports and promote a key exactly once', async () => {
    const a = await startAggregator()
    const b = await startAggregator()
    const events = await listen()
    const client = redis().client()
    const window = currentWindow()
    for (let i = 0; i < 100; i++)
      await sendReport(client, names(), makeReport(`agent-${i}`, window, { shared: 15 }))
    const total = async () =>
      ((await a.metrics.ingestReports.get()).values[0]?.value ?? 0) +
      ((await b.metrics.ingestReports.get()).values[0]?.value ?? 0)
    await until(async () => (await total()) === 100)
    expect(((await a.metrics.ingestReports.get()).values[0]?.value ?? 0) > 0).toBe(true)
    expect(((await b.metrics.ingestReports.get()).values[0]?.value ?? 0) > 0).toBe(true)
    expect(await a.detection.counters.read(['shared'], window)).toEqual([
      { count: 1500, writes: 0, misses: 0 },
    ])
    await until(() => events.length === 1)
    await new Promise((r) => setTimeout(r, 300))
    expect(events.map((e) => [e.type, e.version])).toEqual([['promote', 1]])
  })

  it('keeps detecting through a Postgres outage and promotes once Postgres is back', async () => {
    const target = new URL(postgres().url)
    const proxy = new ChaosProxy({ host: target.hostname, port: Number(target.port || 5432) })
    await proxy.start()
    try {
      const viaProxy = new URL(postgres().url)
      viaProxy.hostname = '127.0.0.1'
      viaProxy.port = String(proxy.port)
      const aggregator = await startAggregator({}, viaProxy.toString())
      const events = await listen()
      await proxy.cut()
      const client = redis().client()
      await sendReport(client, names(), makeReport('agent-1', currentWindow(), { 'during:outage': 2000 }))
      await until(() => aggregator.detection.detector.pending === 1)
      expect(events).toEqual([])
      const during = await aggregator.app.inject({
        method: 'POST',
        url: '/hotkeys/k/promote',
        payload: { mitigation: 'split' },
      })
      expect(during.statusCode).toBe(503)

      await proxy.restore()
      const promoted = await until(() => events.find((e) => e.type === 'promote'), 10_000)
      expect(promoted).toMatchObject({ entry: { key: 'during:outage', source: 'auto' } })
      expect(aggregator.detection.detector.pending).toBe(0)
    } finally {
      await Promise.all(started.splice(0).map((a) => a.stop()))
      await proxy.close()
    }
  })
})
