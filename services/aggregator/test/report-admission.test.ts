import { createNames, decodeReport } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { loadConfig } from '../src/config.js'
import { ManualClock, silent, until } from './support/fixtures.js'
import { sampleSum, scrape } from './support/prometheus.js'
import { makeReport, sendReport } from './support/reports.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

const WINDOW_MS = 1000
// 2100-01-01T00:00:00Z, a window start on the grid.
const YEAR_2100 = Date.UTC(2100, 0, 1)

describe('reports that do not describe one of the aggregator’s windows', () => {
  const started: Aggregator[] = []
  afterEach(async () => {
    await Promise.all(started.splice(0).map((aggregator) => aggregator.stop()))
  })

  it('dead-letters reports from the future or of another window length with the reason, counts them, and promotes nothing from them', async () => {
    // The aggregator's clock stands still at the start of a window, so "how far ahead" is exact.
    const now = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS
    const aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_HOT_RPS: '1000',
        HEATSINK_WINDOW_MS: String(WINDOW_MS),
        HEATSINK_REPLICA_ID: 'replica-1',
        PORT: '0',
        // HEATSINK_MAX_CLOCK_SKEW_MS left at its default, 5000.
      }),
      { log: silent, clock: new ManualClock(now) },
    )
    started.push(aggregator)
    await aggregator.start()
    const names = createNames(redis().namespace)
    const client = redis().client()

    // Each is protocol-valid and far over the threshold (1000 per window); only its window is wrong.
    const refused = {
      'agent-2100': makeReport('agent-2100', YEAR_2100, { 'from:2100': 5000 }),
      'agent-6s-ahead': makeReport('agent-6s-ahead', now + 6000, { 'ahead:6s': 5000 }),
      'agent-1ms': makeReport('agent-1ms', now, { 'window:1ms': 5000 }, { windowMs: 1 }),
      'agent-2s': makeReport('agent-2s', now, { 'window:2s': 5000 }, { windowMs: 2000 }),
      'agent-off-grid': makeReport('agent-off-grid', now + 500, { 'off:grid': 5000 }),
    }
    const accepted = {
      // Exactly the allowed skew ahead: an agent whose clock runs 5 s fast.
      'agent-5s-ahead': makeReport('agent-5s-ahead', now + 5000, { 'ahead:5s': 1500 }),
      'agent-on-time': makeReport('agent-on-time', now, { 'on:time': 1200 }),
    }
    const ids = new Map<string, string>()
    for (const report of [...Object.values(refused), ...Object.values(accepted)])
      ids.set(report.agentId, await sendReport(client, names, report))

    const hotKeys = async () =>
      ((await aggregator.app.inject({ url: '/hotkeys' })).json().hotkeys as Array<{ key: string }>)
        .map((entry) => entry.key)
        .sort()
    await until('both good reports promoted', async () => (await hotKeys()).length === 2)
    await until('every refusal dead-lettered', async () => (await client.xlen(names.deadLetterStream)) === 5)

    const dead = new Map(
      (await client.xrange(names.deadLetterStream, '-', '+')).map(([, fields]) => {
        const field = (name: string) => fields[fields.indexOf(name) + 1] as string
        const agentId = decodeReport(field('raw')).agentId
        return [
          agentId,
          { id: field('id'), stream: field('stream'), reason: field('reason'), message: field('message') },
        ]
      }),
    )
    expect(Object.fromEntries([...dead].map(([agent, entry]) => [agent, entry.reason]))).toEqual({
      'agent-2100': 'E_FROM_THE_FUTURE',
      'agent-6s-ahead': 'E_FROM_THE_FUTURE',
      'agent-1ms': 'E_WINDOW_MISMATCH',
      'agent-2s': 'E_WINDOW_MISMATCH',
      'agent-off-grid': 'E_WINDOW_MISMATCH',
    })
    // Each names the entry it set aside and says what was wrong, with the numbers.
    for (const [agent, entry] of dead) {
      expect(entry).toMatchObject({ id: ids.get(agent), stream: names.reportStreamFor(agent) })
    }
    expect(dead.get('agent-2100')?.message).toBe(
      `windowStart 2100-01-01T00:00:00.000Z is ${YEAR_2100 - now} ms ahead of this aggregator's clock, more than HEATSINK_MAX_CLOCK_SKEW_MS (5000 ms)`,
    )
    expect(dead.get('agent-6s-ahead')?.message).toContain('is 6000 ms ahead')
    expect(dead.get('agent-1ms')?.message).toBe(
      "windowMs 1 differs from this aggregator's window of 1000 ms (HEATSINK_WINDOW_MS)",
    )
    expect(dead.get('agent-off-grid')?.message).toBe(
      `windowStart ${now + 500} is not a multiple of this aggregator's window of 1000 ms`,
    )

    const metrics = await scrape(aggregator)
    expect(sampleSum(metrics, 'heatsink_dead_letter_total', { reason: 'E_FROM_THE_FUTURE' })).toBe(2)
    expect(sampleSum(metrics, 'heatsink_dead_letter_total', { reason: 'E_WINDOW_MISMATCH' })).toBe(3)
    expect(sampleSum(metrics, 'heatsink_ingest_reports_total')).toBe(2)

    // Nothing of the refused reports was counted or promoted; the accepted ones were, in full.
    expect(await hotKeys()).toEqual(['ahead:5s', 'on:time'])
    const counters = aggregator.detection.counters
    expect(await counters.read(['window:1ms', 'window:2s', 'on:time'], now)).toEqual([
      undefined,
      undefined,
      { count: 1200, writes: 0, misses: 0 },
    ])
    expect(await counters.read(['ahead:6s'], now + 6000)).toEqual([undefined])
    expect(await counters.read(['ahead:5s'], now + 5000)).toEqual([{ count: 1500, writes: 0, misses: 0 }])
    const audit = await postgres().pool.query('SELECT raw_key FROM hot_key_events ORDER BY raw_key')
    expect(audit.rows.map((row) => row.raw_key)).toEqual(['ahead:5s', 'on:time'])

    // Refused entries are acknowledged like any other: nothing is left pending to be retried.
    await until('every entry acknowledged', async () => {
      let pending = 0
      for (const stream of names.reportStreams) {
        const [count] = (await client.xpending(stream, names.consumerGroup)) as [number]
        pending += count
      }
      return pending === 0
    })
  })
})
