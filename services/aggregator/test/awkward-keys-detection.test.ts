import { createNames, decodeRegistryEvent, type RegistryEvent } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { loadConfig } from '../src/config.js'
import { AWKWARD_KEYS } from './support/awkward-keys.js'
import { silent, until } from './support/fixtures.js'
import { makeReport, sendReport } from './support/reports.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

// A key Postgres text cannot hold used to fail its automatic promotion once, silently, for good.
describe('automatic promotion of awkward keys', () => {
  let aggregator: Aggregator | undefined
  afterEach(async () => {
    await aggregator?.stop()
    aggregator = undefined
  })

  it('promotes each key from the reports, publishes it and keeps it in the registry intact', async () => {
    aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_HOT_RPS: '1000',
        HEATSINK_WINDOW_MS: '1000',
        PORT: '0',
      }),
      { log: silent },
    )
    await aggregator.start()
    const names = createNames(redis().namespace)
    const events: RegistryEvent[] = []
    const subscriber = redis().client()
    subscriber.on('message', (_channel, message) => events.push(decodeRegistryEvent(message)))
    await subscriber.subscribe(names.registryChannel)

    const keys = AWKWARD_KEYS.map(([, key]) => key)
    const window = Math.floor(Date.now() / 1000) * 1000
    const counts = Object.fromEntries(keys.map((key) => [key, 1100]))
    await sendReport(redis().client(), names, makeReport('agent-1', window, counts))

    await until('a promote event for every key', () => events.length === keys.length, 8_000)
    // Counting happens in Redis, which holds bytes: a lone surrogate reaches it as U+FFFD (as ioredis sends it
    // for the application's own commands too, so that is the Redis key, with the same key hash), and comes back
    // so. Every well-formed key, NUL and all, comes back exactly.
    const expected = new Set(keys.map((key) => key.replace(/[\uD800-\uDFFF]/gu, '\ufffd')))
    const promoted = events.map((event) => (event.type === 'demote' ? event.key : event.entry.key))
    expect(new Set(promoted)).toEqual(expected)
    expect(new Set((await aggregator.registry.list()).map((entry) => entry.key))).toEqual(expected)
    expect(aggregator.detection.detector.pending).toBe(0)
    expect((await aggregator.metrics.registryWriteFailures.get()).values[0]?.value ?? 0).toBe(0)
  })
})
