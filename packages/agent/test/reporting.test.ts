import { freePort } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { ManualClock, WindowRecorder } from '@heatsink/sketch'
import { useTestRedis } from '@heatsink/test'
import { exactCounts, zipfStream } from '@heatsink/workload'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { AgentNotReadyError, createAgent, REPORT_STREAM_TTL_MS } from '../src/index.js'
import { publishRegistry } from '../src/testing.js'
import { useAgents, waitFor } from './support/helpers.js'
import { windowReports } from './support/window-reports.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

// Aligned to the window, so the first window starts exactly at the clock's start.
const START = 1_700_000_000_000

const reports = (client: Redis, agentId: string) => windowReports(client, redis().namespace, agentId)

describe('window reports', () => {
  it('reach the stream with counts that match the exact counts within the sketch error bound', async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'zipf', clock, maxPartialReportsPerWindow: 0 })
    await agent.ready()
    const { namespace } = redis()
    const stream = zipfStream({
      length: 20_000,
      keys: 2_000,
      s: 1.1,
      seed: 7,
      keyName: (i) => `${namespace}:product:${i}`,
    })
    for (let i = 0; i < stream.length; i += 1000) {
      await Promise.all(stream.slice(i, i + 1000).map((key) => agent.get(key)))
    }
    clock.advance(1000)
    const client = redis().client()
    await waitFor(async () => (await reports(client, 'zipf')).length === 1, 'the window report')
    const [report] = await reports(client, 'zipf')
    if (report === undefined) throw new Error('unreachable')

    const truth = exactCounts(stream)
    // Keys that are not candidates yet are counted in a batch after the event loop turn (deferColdKeys), so a
    // key's requests in the first batch of 1,000 came before it was tracked, and their replies went unwatched.
    const untracked = exactCounts(stream.slice(0, 1000))
    const bound = (Math.E / new WindowRecorder().sketch.width) * stream.length
    expect(report).toMatchObject({
      seq: 1,
      windowStart: START,
      windowMs: 1000,
      total: 20_000,
      dropped: 0,
      partial: false,
    })
    expect(report.candidates.length).toBeGreaterThanOrEqual(32)
    // One key in 256 is counted exactly beside the sketch: the error measured at run time travels with the report.
    const sampled = report.sketchError
    expect(sampled?.sampled).toBeGreaterThan(0)
    expect(sampled?.bound).toBeCloseTo(bound)
    for (const [key, estimate, exact] of sampled?.keys ?? []) {
      expect(exact).toBe(truth.get(key))
      expect(estimate).toBeGreaterThanOrEqual(exact)
    }
    for (const candidate of report.candidates) {
      const exact = truth.get(candidate.key) ?? 0
      expect(candidate.count).toBeGreaterThanOrEqual(exact)
      expect(candidate.count - exact).toBeLessThanOrEqual(bound)
      expect(candidate.reads).toBeLessThanOrEqual(exact)
      expect(candidate.writes).toBe(0)
      // Every key is absent from Redis, so every read counted while tracked was a miss.
      expect(candidate.misses).toBeLessThanOrEqual(candidate.count)
    }
    const reported = new Set(report.candidates.map((candidate) => candidate.key))
    const top = [...truth].sort((a, b) => b[1] - a[1]).slice(0, 20)
    for (const [key, count] of top) {
      expect(reported.has(key)).toBe(true)
      // The hottest keys are candidates from their first requests, so they are counted exactly.
      const candidate = report.candidates.find((c) => c.key === key)
      expect(candidate).toMatchObject({ count, reads: count })
      // Every read missed. Past a key's 63rd read only some replies are watched, each miss weighing the reads
      // since the last watched one (see missSampleWeight), so the count is short by less than one such gap,
      // besides the reads of the first batch.
      expect(candidate?.misses).toBeLessThanOrEqual(count)
      expect(candidate?.misses).toBeGreaterThan(count - 64 - (untracked.get(key) ?? 0))
    }
    expect(agent.stats().reportsSent).toBe(1)
  })

  it('reports per-hot-key statistics for registered keys', async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'hot-stats', clock, maxPartialReportsPerWindow: 0 })
    await agent.ready()
    const { namespace } = redis()
    const hot = `${namespace}:hot`
    const absent = `${namespace}:absent`
    const plain = redis().client()
    await plain.set(hot, 'v')
    await publishRegistry(
      plain,
      createNames(namespace),
      { key: hot },
      { key: absent, mitigation: 'coalesce' },
    )
    await waitFor(() => agent.stats().l1Entries === 1, 'L1 filled')
    for (let i = 0; i < 5; i++) await agent.get(hot)
    for (let i = 0; i < 3; i++) await agent.get(absent)
    clock.advance(1000)
    const client = redis().client()
    await waitFor(async () => (await reports(client, 'hot-stats')).length === 1, 'the window report')
    const [report] = await reports(client, 'hot-stats')
    expect(report?.hotKeyStats).toEqual([
      {
        key: hot,
        l1Hits: 5,
        l1Misses: 0,
        // The fill on promotion: the window's one read of the key at Redis.
        l1Fills: 1,
        misses: 0,
        coalescedWaiters: 0,
        upstreamLoads: 0,
        staleServes: 0,
        leaseWaits: 0,
        timeouts: 0,
      },
      {
        // Three reads one after the other: three GETs (the coalesce key's upstream), none shared.
        key: absent,
        l1Hits: 0,
        l1Misses: 0,
        misses: 3,
        coalescedWaiters: 0,
        upstreamLoads: 3,
        staleServes: 0,
        leaseWaits: 0,
        timeouts: 0,
      },
    ])
  })

  it('sends a partial report at once when a key crosses the fast-report floor, a few per window at most', async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'fast', clock, fastReportFloor: 50, maxPartialReportsPerWindow: 2 })
    await agent.ready()
    const { namespace } = redis()
    const client = redis().client()
    const key = (name: string) => `${namespace}:${name}`
    await publishRegistry(client, createNames(namespace), { key: key('known'), mitigation: 'coalesce' })
    await waitFor(() => agent.mitigation(key('known')) === 'coalesce', 'the registration')
    const hammer = async (name: string, times: number) => {
      for (let i = 0; i < times; i++) await agent.get(key(name))
    }

    // A key already registered is being mitigated: no fast report for it.
    await hammer('known', 60)
    await new Promise((resolve) => setImmediate(resolve))
    expect(agent.stats().partialReports).toBe(0)

    await hammer('a', 50)
    await waitFor(() => agent.stats().reportsSent === 1, 'the first partial report')
    await hammer('b', 50)
    await waitFor(() => agent.stats().reportsSent === 2, 'the second partial report')
    await hammer('c', 50)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(agent.stats()).toMatchObject({ partialReports: 2, reportsSent: 2 })

    const partials = await reports(client, 'fast')
    expect(partials.map((report) => [report.seq, report.partial, report.windowStart])).toEqual([
      [1, true, START],
      [2, true, START],
    ])
    expect(partials[0]?.candidates.find((c) => c.key === key('a'))).toMatchObject({ count: 50, reads: 50 })
    expect(partials[1]?.candidates.find((c) => c.key === key('b'))).toMatchObject({ count: 50 })

    clock.advance(1000)
    await waitFor(async () => (await reports(client, 'fast')).length === 3, 'the final report')
    const final = (await reports(client, 'fast'))[2]
    expect(final).toMatchObject({ seq: 3, partial: false, windowStart: START })
    expect(final?.candidates.find((c) => c.key === key('c'))).toMatchObject({ count: 50 })
    // A new window allows partial reports again.
    await hammer('d', 50)
    await waitFor(() => agent.stats().partialReports === 3, 'a partial report in the next window')
  })

  it("measures a surging key's rate a tenth of a second after its crossing and reports it with only the fast keys", async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'rate', clock, fastReportFloor: 50 })
    await agent.ready()
    const { namespace } = redis()
    const client = redis().client()
    const surge = `${namespace}:surge`
    for (let i = 0; i < 3; i++) await agent.get(`${namespace}:quiet`)
    for (let i = 0; i < 50; i++) await agent.get(surge)
    await waitFor(() => agent.stats().partialReports === 1, 'the partial at the crossing')
    clock.advance(40)
    for (let i = 0; i < 30; i++) await agent.get(surge)
    clock.advance(60)
    await waitFor(() => agent.stats().partialReports === 2, 'the partial that measures the rate')
    const [atCrossing, measured] = await reports(client, 'rate')
    expect(atCrossing?.rates).toBeUndefined()
    // 30 requests in the 100 ms since the crossing: 300 req/s. The cold key is left to the window's report.
    expect(measured?.rates).toEqual([[surge, 300]])
    expect(measured?.candidates.map((c) => c.key)).toEqual([surge])
  })

  it('keeps sending partials every quarter window while a key above the floor is unregistered, then stops', async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'cadence', clock, fastReportFloor: 50, maxPartialReportsPerWindow: 4 })
    await agent.ready()
    const { namespace } = redis()
    const client = redis().client()
    const viral = `${namespace}:viral`
    const hammer = async (times: number) => {
      for (let i = 0; i < times; i++) await agent.get(viral)
    }
    await hammer(50)
    await waitFor(() => agent.stats().partialReports === 1, 'the partial at the crossing')
    await hammer(70)
    clock.advance(250)
    await waitFor(() => agent.stats().partialReports === 2, 'the follow-up a quarter window later')
    const counts = (await reports(client, 'cadence')).map(
      (r) => r.candidates.find((c) => c.key === viral)?.count,
    )
    expect(counts).toEqual([50, 120])

    // Once the key is registered it is being mitigated: no more follow-ups.
    await publishRegistry(client, createNames(namespace), { key: viral, mitigation: 'local_cache' })
    await waitFor(() => agent.mitigation(viral) === 'local_cache', 'the registration')
    clock.advance(250)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(agent.stats().partialReports).toBe(2)
  })

  it('close() flushes the last report and leaves a client that was passed in open', async () => {
    const clock = new ManualClock(START)
    const client = redis().client()
    const agent = createAgent({ redis: client, namespace: redis().namespace, agentId: 'closing', clock })
    await agent.ready()
    for (let i = 0; i < 7; i++) await agent.get(`${redis().namespace}:k`)
    clock.advance(400)
    await agent.close()
    const [report] = await reports(client, 'closing')
    // Cut short at 400 ms, the window is still reported by its configured length: its counts belong to it, and
    // aggregators refuse any other length.
    expect(report).toMatchObject({ seq: 1, total: 7, windowStart: START, windowMs: 1000, partial: false })
    expect(client.status).toBe('ready')
    expect(await client.ping()).toBe('PONG')
    const clients = (await client.client('LIST')) as string
    expect(clients).not.toContain(':closing ')
    expect(agent.redis).toBe(client)
  })

  it('sets the report stream to expire minutes after each report, so an agent that goes away leaves nothing', async () => {
    const clock = new ManualClock(START)
    const client = redis().client()
    const agent = newAgent({ agentId: 'expiring', clock })
    const stream = createNames(redis().namespace).reportStreamFor('expiring')
    await agent.ready()
    await agent.get(`${redis().namespace}:k`)
    clock.advance(1000)
    await waitFor(async () => (await reports(client, 'expiring')).length === 1, 'the first report')
    const ttl = await client.pttl(stream)
    expect(ttl).toBeGreaterThan(REPORT_STREAM_TTL_MS - 5000)
    expect(ttl).toBeLessThanOrEqual(REPORT_STREAM_TTL_MS)

    // Each report renews it: a stream in use never expires.
    await client.pexpire(stream, 1000)
    await agent.get(`${redis().namespace}:k`)
    clock.advance(1000)
    await waitFor(async () => (await reports(client, 'expiring')).length === 2, 'the second report')
    expect(await client.pttl(stream)).toBeGreaterThan(REPORT_STREAM_TTL_MS - 5000)

    // Closed with no aggregator to read or trim it, the stream still expires.
    await agent.close()
    expect(await client.pttl(stream)).toBeGreaterThan(0)
  })

  it('ready() rejects with a clear error when Redis cannot be reached', async () => {
    const port = await freePort()
    const agent = createAgent({ redis: `redis://127.0.0.1:${port}`, readyTimeoutMs: 300 })
    try {
      const error = await agent.ready().catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(AgentNotReadyError)
      expect((error as AgentNotReadyError).message).toMatch(/not ready after 300 ms.*ECONNREFUSED/s)
      expect((error as AgentNotReadyError).code).toBe('E_AGENT_NOT_READY')
    } finally {
      await agent.close()
    }
  })
})
