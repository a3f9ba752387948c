import { createNames, STREAM_FIELD } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { WindowCounters } from '../src/detection/window-counters.js'
import { type ReceivedReport, ReportConsumer } from '../src/ingest/report-consumer.js'
import { entriesOf } from '../src/ingest/stream-entries.js'
import { counterValue, makeReport, sendReport, silentLog, testMetrics } from './support/reports.js'

const WINDOW = 1_700_000_000_000

describe('ReportConsumer', () => {
  const redis = useTestRedis()

  function setup() {
    const names = createNames(redis().namespace, { reportShards: 4 })
    const client = redis().client()
    const counters = new WindowCounters(client, {
      names,
      shards: 1,
      windowMs: 1000,
      hotRps: 1_000_000,
      retainMs: 60_000,
    })
    return { names, client, counters }
  }

  function consumer(
    names: ReturnType<typeof createNames>,
    name: string,
    process: (reports: ReceivedReport[]) => Promise<void>,
    metrics = testMetrics(),
    options: { claimIdleMs?: number; batchSize?: number } = {},
  ) {
    return new ReportConsumer({
      redis: redis().client(),
      names,
      consumer: name,
      process,
      metrics,
      log: silentLog,
      blockMs: 100,
      ...options,
    })
  }

  async function pendingCount(names: ReturnType<typeof createNames>) {
    const client = redis().client()
    let total = 0
    for (const stream of names.reportStreams) {
      const [count] = (await client.xpending(stream, names.consumerGroup)) as [number]
      total += count
    }
    return total
  }

  async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not met in time')
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  it('two replicas share the reports: each takes some, every report is applied once', async () => {
    const { names, client, counters } = setup()
    const seen = { a: 0, b: 0 }
    const apply = (who: 'a' | 'b') => async (reports: ReceivedReport[]) => {
      seen[who] += reports.length
      await Promise.all(reports.map((r) => counters.apply(r.report)))
    }
    const a = consumer(names, 'replica-a', apply('a'), testMetrics(), { batchSize: 5 })
    const b = consumer(names, 'replica-b', apply('b'), testMetrics(), { batchSize: 5 })
    await Promise.all([a.start(), b.start()])
    const agents = 40
    const perAgent = 10
    for (let round = 0; round < perAgent; round++) {
      for (let i = 0; i < agents; i++)
        await sendReport(client, names, makeReport(`agent-${i}`, WINDOW + round * 1000, { shared: 3 }))
    }
    await until(() => seen.a + seen.b === agents * perAgent)
    await Promise.all([a.stop(), b.stop()])
    expect(seen.a).toBeGreaterThan(0)
    expect(seen.b).toBeGreaterThan(0)
    for (let round = 0; round < perAgent; round++) {
      expect(await counters.read(['shared'], WINDOW + round * 1000)).toEqual([
        { count: agents * 3, writes: 0, misses: 0 },
      ])
    }
    expect(await pendingCount(names)).toBe(0)
  })

  it('a replica that dies mid-batch loses nothing, and what it applied before dying is not counted twice', async () => {
    const { names, client, counters } = setup()
    // Create the group, then play a replica that reads a batch, applies half of it and dies without acking.
    const survivorMetrics = testMetrics()
    const survivor = consumer(
      names,
      'survivor',
      async (reports) => {
        await Promise.all(reports.map((r) => counters.apply(r.report)))
      },
      survivorMetrics,
      { claimIdleMs: 300 },
    )
    await survivor.start()
    await survivor.stop()
    const reports = Array.from({ length: 20 }, (_, i) => makeReport(`agent-${i}`, WINDOW, { k: 10 }))
    for (const r of reports) await sendReport(client, names, r)
    let taken = 0
    for (const stream of names.reportStreams) {
      const entries = entriesOf(
        await client.xreadgroup('GROUP', names.consumerGroup, 'doomed', 'COUNT', 100, 'STREAMS', stream, '>'),
      )
      for (const [, fields] of entries) {
        if (taken++ % 2 === 0) {
          const { decodeReport } = await import('@heatsink/protocol')
          await counters.apply(decodeReport(fields[fields.indexOf(STREAM_FIELD) + 1] as string))
        }
      }
    }
    expect(taken).toBe(20)
    expect(await pendingCount(names)).toBe(20)

    const restarted = consumer(
      names,
      'survivor',
      async (batch) => {
        await Promise.all(batch.map((r) => counters.apply(r.report)))
      },
      survivorMetrics,
      { claimIdleMs: 300 },
    )
    await restarted.start()
    await until(async () => (await pendingCount(names)) === 0)
    await restarted.stop()
    expect(await counters.read(['k'], WINDOW)).toEqual([{ count: 200, writes: 0, misses: 0 }])
    expect(await counterValue(survivorMetrics.claimed)).toBe(20)
  })

  it('a restarted replica first finishes its own pending reports', async () => {
    const { names, client, counters } = setup()
    const first = consumer(names, 'same-name', async () => {})
    await first.start()
    await first.stop()
    await sendReport(client, names, makeReport('agent-1', WINDOW, { k: 5 }))
    const stream = names.reportStreamFor('agent-1')
    await client.xreadgroup('GROUP', names.consumerGroup, 'same-name', 'COUNT', 10, 'STREAMS', stream, '>')
    expect(await pendingCount(names)).toBe(1)
    const again = consumer(
      names,
      'same-name',
      async (batch) => {
        await Promise.all(batch.map((r) => counters.apply(r.report)))
      },
      testMetrics(),
      { claimIdleMs: 60_000 },
    )
    await again.start()
    await until(async () => (await pendingCount(names)) === 0)
    await again.stop()
    expect(await counters.read(['k'], WINDOW)).toEqual([{ count: 5, writes: 0, misses: 0 }])
  })

  it('sets malformed entries aside in the dead-letter stream, counts them, and keeps going', async () => {
    const { names, client } = setup()
    const metrics = testMetrics()
    const good: ReceivedReport[] = []
    const c = consumer(
      names,
      'r1',
      async (batch) => {
        good.push(...batch)
      },
      metrics,
    )
    await c.start()
    const stream = names.reportStreams[0] as string
    await client.xadd(stream, '*', STREAM_FIELD, 'not json')
    await client.xadd(stream, '*', STREAM_FIELD, JSON.stringify({ ...makeReport('a', WINDOW, {}), v: 2 }))
    await client.xadd(stream, '*', STREAM_FIELD, JSON.stringify(makeReport('a', WINDOW, { k: -1 })))
    await client.xadd(stream, '*', 'other', 'x')
    await sendReport(client, names, makeReport('a', WINDOW, { k: 1 }))
    await until(() => good.length === 1)
    await until(async () => (await client.xlen(names.deadLetterStream)) === 4)
    await c.stop()
    const dead = (await client.xrange(names.deadLetterStream, '-', '+')).map(
      ([, fields]) => fields[fields.indexOf('reason') + 1],
    )
    expect(dead).toEqual(['E_MALFORMED_MESSAGE', 'E_WIRE_VERSION', 'E_MALFORMED_MESSAGE', 'E_MISSING_FIELD'])
    const messages = (await client.xrange(names.deadLetterStream, '-', '+')).map(
      ([, f]) => f[f.indexOf('message') + 1],
    )
    expect(messages[2]).toContain('candidates.0.count')
    expect(await counterValue(metrics.deadLettered)).toBe(4)
    expect(await counterValue(metrics.deadLettered, { reason: 'E_WIRE_VERSION' })).toBe(1)
    expect(await pendingCount(names)).toBe(0)
  })

  it('on stop, finishes and acknowledges the batch in hand before closing', async () => {
    const { names, client } = setup()
    let release: () => void = () => {}
    const holding = new Promise<void>((r) => {
      release = r
    })
    let started = false
    let finished = false
    const c = consumer(names, 'r1', async () => {
      started = true
      await holding
      finished = true
    })
    await c.start()
    await sendReport(client, names, makeReport('a', WINDOW, { k: 1 }))
    await until(() => started)
    const stopping = c.stop()
    setTimeout(release, 50)
    await stopping
    expect(finished).toBe(true)
    expect(await pendingCount(names)).toBe(0)
  })
})
