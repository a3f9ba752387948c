import { CommandForm } from '@heatsink/commands'
import { createNames, encodeReport, STREAM_FIELD } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { loadConfig } from '../src/config.js'
import { silent, until } from './support/fixtures.js'
import { counterValue, makeReport, sendReport } from './support/reports.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

const WINDOW_MS = 1000
const currentWindow = () => Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS

/** The command forms in reports: optional on the wire, checked, and what decides whether a write-hot key is split. */
describe('command forms in window reports', () => {
  let aggregator: Aggregator | undefined
  afterEach(async () => {
    await aggregator?.stop()
    aggregator = undefined
  })

  async function start(): Promise<Aggregator> {
    aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_HOT_RPS: '1000',
        HEATSINK_WINDOW_MS: String(WINDOW_MS),
        PORT: '0',
      }),
      { log: silent },
    )
    await aggregator.start()
    return aggregator
  }

  const names = () => createNames(redis().namespace)
  const ingested = async (a: Aggregator) => (await a.metrics.ingestReports.get()).values[0]?.value ?? 0

  it('accepts a report without forms (an older agent) and never splits on it: its forms count as foreign', async () => {
    const a = await start()
    const window = currentWindow()
    // Write-hot from both agents; only the newer one says what it saw.
    await sendReport(redis().client(), names(), makeReport('old-agent', window, { 'likes:1': [600, 600, 0] }))
    await sendReport(
      redis().client(),
      names(),
      makeReport('new-agent', window, { 'likes:1': [600, 600, 0, CommandForm.counterWrite] }),
    )
    await until('both reports counted', async () => (await ingested(a)) === 2)
    expect(await counterValue(a.metrics.deadLetters)).toBe(0)
    const stats = (await a.app.inject({ url: '/hotkeys/likes%3A1/stats' })).json()
    expect(stats).toMatchObject({ commandForms: ['counter-write', 'other'], splitKind: null })
    expect(await a.registry.list()).toEqual([])

    // The same traffic from new agents alone, on another key, is split.
    await sendReport(
      redis().client(),
      names(),
      makeReport('new-agent', window, { 'likes:2': [1200, 1200, 0, CommandForm.counterWrite] }),
    )
    await until('the split', async () => (await a.registry.list()).length === 1)
    expect(await a.registry.list()).toMatchObject([{ key: 'likes:2', mitigation: 'split', source: 'auto' }])
  })

  it('sets aside and counts a report whose forms are malformed, like any malformed report', async () => {
    const a = await start()
    const window = currentWindow()
    const client = redis().client()
    const valid = makeReport('agent-1', window, { 'a:1': [10, 0, 0, 2], 'a:2': [10, 0, 0, 2] })
    const malformed = [
      { ...valid, forms: [2] },
      { ...valid, forms: [2, -1] },
      { ...valid, forms: [2, 1.5] },
      { ...valid, forms: 'counter' },
    ]
    for (const report of malformed) {
      // Encoded by hand: the codec would refuse to write them.
      await client.xadd(names().reportStreamFor('agent-1'), '*', STREAM_FIELD, JSON.stringify(report))
    }
    await sendReport(client, names(), valid)
    await until('every entry handled', async () => (await counterValue(a.metrics.deadLetters)) === 4)
    expect(await counterValue(a.metrics.deadLetters, { reason: 'E_MALFORMED_MESSAGE' })).toBe(4)
    await until('the valid one counted', async () => (await ingested(a)) === 1)
    expect(encodeReport(valid)).toContain('"forms":[2,2]')
  })
})
