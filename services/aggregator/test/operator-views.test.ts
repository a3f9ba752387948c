import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import { freePort, startRedisProcess } from '@heatsink/devservices'
import type { LiveFrame } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import type { Clock } from '../src/clock.js'
import { testConfig, until } from './support/fixtures.js'
import { makeReport, sendReport } from './support/reports.js'
import { openEventStream } from './support/sse.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

const running: Aggregator[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((aggregator) => aggregator.stop()))
})

async function replica(id: string, clock?: Clock): Promise<Aggregator> {
  const aggregator = createAggregator(
    testConfig({
      DATABASE_URL: postgres().url,
      HEATSINK_NAMESPACE: redis().namespace,
      HEATSINK_REPLICA_ID: id,
      HEATSINK_HOT_RPS: '100',
    }),
    { clock },
  )
  running.push(aggregator)
  await aggregator.start()
  return aggregator
}

// A window every replica already takes as complete, and recent enough to be counted.
const completeWindow = () => Math.floor(Date.now() / 1000) * 1000 - 2000

async function json<T>(url: string): Promise<{ status: number; body: T }> {
  const response = await fetch(url)
  return { status: response.status, body: (await response.json()) as T }
}

describe('operator views', () => {
  it('lists the agents reporting, the events with who and how fast, and a key’s per-agent statistics', async () => {
    const aggregator = await replica('replica-a')
    const base = aggregator.url() ?? ''
    const key = `${redis().namespace}:post/42`
    const window = completeWindow()
    await sendReport(
      redis().client(),
      aggregator.names,
      makeReport('agent-1', window, { [key]: 300 }, { dropped: 2, registryVersion: 0 }),
    )
    await until('the key promoted', async () => (await aggregator.registry.get(key)) !== undefined)
    await until(
      'the agent listed',
      async () => (await json<{ agents: unknown[] }>(`${base}/agents`)).body.agents.length > 0,
    )

    const agents = await json<{ agents: Array<Record<string, unknown>> }>(`${base}/agents`)
    expect(agents.body.agents).toEqual([
      expect.objectContaining({ agentId: 'agent-1', reportsDropped: 2, registryVersion: 0, stale: false }),
    ])

    const manual = `${redis().namespace}:config blob`
    await fetch(`${base}/hotkeys/${encodeURIComponent(manual)}/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mitigation: 'coalesce' }),
    })
    await fetch(`${base}/hotkeys/${encodeURIComponent(manual)}`, { method: 'DELETE' })

    const all = await json<{ events: Array<Record<string, unknown>> }>(`${base}/events`)
    expect(all.body.events.map((e) => [e.version, e.type, e.key, e.source, e.actor])).toEqual([
      [3, 'demote', manual, 'manual', 'api'],
      [2, 'promote', manual, 'manual', 'api'],
      [1, 'promote', key, 'auto', 'replica-a'],
    ])
    const auto = all.body.events[2]
    expect(auto?.onsetToMitigationMs).toEqual(expect.any(Number))
    expect(auto?.requestsPerSecond).toBe(300)
    expect(all.body.events[1]?.onsetToMitigationMs).toBeNull()

    const followed = await json<{ events: Array<{ version: number }> }>(`${base}/events?after=1`)
    expect(followed.body.events.map((e) => e.version)).toEqual([3, 2])
    const ofKey = await json<{ events: Array<{ version: number }> }>(
      `${base}/events?key=${encodeURIComponent(manual)}&limit=1`,
    )
    expect(ofKey.body.events.map((e) => e.version)).toEqual([3])
    const bad = await json<{ message: string }>(`${base}/events?limit=0`)
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBe('querystring/limit must be an integer from 1 to 500')

    await sendReport(
      redis().client(),
      aggregator.names,
      makeReport(
        'agent-1',
        window,
        { [key]: 300 },
        {
          seq: 2,
          hotKeyStats: [
            {
              key,
              l1Hits: 250,
              l1Misses: 50,
              misses: 0,
              coalescedWaiters: 0,
              upstreamLoads: 0,
              staleServes: 0,
              leaseWaits: 0,
              timeouts: 0,
            },
          ],
        },
      ),
    )
    await until('the key’s agent statistics', async () => {
      const perAgent = await json<{ agents: unknown[] }>(`${base}/hotkeys/${encodeURIComponent(key)}/agents`)
      return perAgent.body.agents.length === 1
    })
    const perAgent = await json<{ agents: unknown[] }>(`${base}/hotkeys/${encodeURIComponent(key)}/agents`)
    expect(perAgent.body.agents).toEqual([
      expect.objectContaining({ agentId: 'agent-1', l1Hits: 250, l1Misses: 50 }),
    ])

    // The operators' routes are in the OpenAPI document, and it stays valid.
    const document = (await json<{ paths: Record<string, unknown> }>(`${base}/docs/json`)).body
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/agents', '/events', '/hotkeys/{key}/agents', '/live']),
    )
    await SwaggerParser.validate(structuredClone(document) as never)
  })

  it('shows the same picture on every replica, whichever read the reports', async () => {
    const [one, two] = [await replica('replica-one'), await replica('replica-two')]
    const key = `${redis().namespace}:shared`
    const window = completeWindow()
    await sendReport(
      redis().client(),
      one.names,
      makeReport('agent-9', window, { [key]: 250 }, { dropped: 1 }),
    )
    await until('the key promoted', async () => (await one.registry.get(key)) !== undefined)
    await until(
      'the agent listed',
      async () => (await json<{ agents: unknown[] }>(`${two.url()}/agents`)).body.agents.length > 0,
    )

    // (Live rates are left out: a window boundary between the two requests would change them.)
    expect((await json(`${one.url()}/events`)).body).toEqual((await json(`${two.url()}/events`)).body)
    const agentIds = async (base: string | undefined) =>
      (await json<{ agents: Array<{ agentId: string; reportsDropped: number }> }>(`${base}/agents`)).body
        .agents
    expect(await agentIds(one.url())).toEqual([
      expect.objectContaining({ agentId: 'agent-9', reportsDropped: 1 }),
    ])
    expect((await agentIds(two.url())).map((a) => [a.agentId, a.reportsDropped])).toEqual([['agent-9', 1]])

    const firstFrame = async (base: string | undefined) => {
      const stream = await openEventStream(`${base}/live`)
      try {
        return JSON.parse((await stream.next()).data) as LiveFrame
      } finally {
        stream.close()
      }
    }
    const [a, b] = [await firstFrame(one.url()), await firstFrame(two.url())]
    expect(a.state?.hotkeys.map((hot) => hot.key)).toEqual([key])
    expect(b.state?.hotkeys.map((hot) => hot.key)).toEqual([key])
    expect(a.points.find((p) => p.windowStart === window)?.hot).toEqual({ [key]: 250 })
    expect(b.points.find((p) => p.windowStart === window)?.hot).toEqual({ [key]: 250 })
  })

  it('streams frames over server-sent events, resumes after the last id, and never holds up a shutdown', async () => {
    // The wall clock until the statistics are in, then held there: the stream counts reads absorbed from the
    // agents' statistics of the last three windows only, and under load the steps before it opens can take longer.
    let heldAt: number | undefined
    const aggregator = await replica('replica-live', { now: () => heldAt ?? Date.now() })
    const base = aggregator.url() ?? ''
    const key = `${redis().namespace}:viral`
    const warming = `${redis().namespace}:warming`
    const window = completeWindow()
    await sendReport(
      redis().client(),
      aggregator.names,
      makeReport('agent-1', window, { [key]: 400, [warming]: 60 }),
    )
    await until('the key promoted', async () => (await aggregator.registry.get(key)) !== undefined)
    // The agent's window ends: 300 reads from its L1 and 50 that shared another read's round trip; of its 10 L1
    // misses, 4 filled L1 from Redis and 6 waited on those fills.
    const hotKeyStats = [
      { key, l1Hits: 300, l1Misses: 10, l1Fills: 4, misses: 0, coalescedWaiters: 50, upstreamLoads: 10 },
    ].map((stats) => ({ ...stats, staleServes: 0, leaseWaits: 0, timeouts: 0 }))
    await sendReport(
      redis().client(),
      aggregator.names,
      makeReport('agent-1', window, { [key]: 400, [warming]: 60 }, { seq: 2, hotKeyStats }),
    )
    await until(
      'the statistics stored',
      async () => (await aggregator.detection.keyStats.read(key)).length === 1,
    )
    heldAt = window + 2000
    const stats = await aggregator.detection.traffic.keyStats(key)
    expect(stats?.localCacheHitRatio).toBeCloseTo(300 / 310)
    expect(stats?.localCacheAbsorbedRatio).toBeCloseTo(1 - 4 / 310)

    const stream = await openEventStream(`${base}/live`)
    const first = await stream.next()
    expect(first.event).toBe('frame')
    const frame = JSON.parse(first.data) as LiveFrame
    expect(frame.problem).toBeNull()
    expect(frame.state?.hotRps).toBe(100)
    expect(frame.state?.hotkeys.map((hot) => hot.key)).toEqual([key])
    const point = frame.points.find((p) => p.windowStart === window)
    expect(point?.hot[key]).toBe(400)
    expect(point?.warming[warming]).toBe(60)
    // Reads absorbed are known for the newest window only: the agents' statistics are their latest.
    expect(frame.points.at(-1)?.absorbedReadsPerSecond).toBe(350)
    expect(frame.points.at(0)?.absorbedReadsPerSecond).toBeNull()
    expect(Number(first.id)).toBe(frame.points.at(-1)?.windowStart)
    stream.close()

    // A browser reconnecting sends the last id it saw and gets only the points after it.
    const seen = window - 3000
    const resumed = await openEventStream(`${base}/live`, String(seen))
    const again = JSON.parse((await resumed.next()).data) as LiveFrame
    expect(again.points[0]?.windowStart).toBe(seen + 1000)
    expect(again.points.find((p) => p.windowStart === window)?.hot[key]).toBe(400)

    // The stream stays open; stopping the replica ends it at once instead of waiting for the drain's deadline.
    const started = Date.now()
    await aggregator.stop()
    expect(Date.now() - started).toBeLessThan(3000)
    await expect(resumed.next(2000)).rejects.toThrow()
  })

  it('says on the stream when Redis cannot be read, keeps the last picture, and goes live again by itself', async () => {
    // A private server, since this one is killed.
    const dir = mkdtempSync(join(tmpdir(), 'heatsink-live-redis-'))
    const port = await freePort()
    const launch = () =>
      startRedisProcess({
        binary: 'redis-server',
        dir,
        service: 'redis',
        timeoutMs: 10_000,
        pickPort: async () => port,
      })
    let server = await launch()
    try {
      const aggregator = createAggregator(
        testConfig({
          DATABASE_URL: postgres().url,
          REDIS_URL: `redis://127.0.0.1:${port}`,
          HEATSINK_NAMESPACE: redis().namespace,
          HEATSINK_REPLICA_ID: 'replica-outage',
        }),
      )
      await aggregator.start()
      const stream = await openEventStream(`${aggregator.url()}/live`)
      const frames = async function* () {
        for (;;) yield JSON.parse((await stream.next(10_000)).data) as LiveFrame
      }
      expect((await frames().next()).value?.problem).toBeNull()

      server.process.killNow()
      await server.process.exited
      let down: LiveFrame | undefined
      for await (const frame of frames()) {
        down = frame
        if (frame.problem !== null) break
      }
      expect(down?.problem).toEqual(expect.any(String))
      expect(down?.state?.hotRps).toBe(1000)

      server = await launch()
      for await (const frame of frames()) if (frame.problem === null) break
      stream.close()
      // Stopped while its Redis is up: the stop's QUIT needs an answer.
      await aggregator.stop()
    } finally {
      await server.process.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 40_000)
})
