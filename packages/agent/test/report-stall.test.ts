import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { ensureRedis, freePort, type RunningService, ServiceUnavailableError } from '@heatsink/devservices'
import { createNames, decodeReport, STREAM_FIELD } from '@heatsink/protocol'
import { createTestRedis, type TestRedis } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_CHANNELS, createAgent, type ReportDroppedEvent } from '../src/index.js'

// CLIENT PAUSE stalls every client of a server, so this test gets a private one: on the shared server it
// would stall the other test files' writes too.
let server: RunningService | undefined
let redis: TestRedis | undefined
let unavailable = ''

beforeAll(async () => {
  try {
    server = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
    redis = createTestRedis({ url: server.url })
  } catch (error) {
    // Only where redis-server is not installed (Redis from a container): nothing to test the stall on.
    if (!(error instanceof ServiceUnavailableError)) throw error
    unavailable = error.message
  }
})

afterAll(async () => {
  await redis?.cleanup()
  await server?.stop()
})

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN
}

async function timedGets(get: () => Promise<unknown>, forMs: number): Promise<number[]> {
  const times: number[] = []
  const end = performance.now() + forMs
  while (performance.now() < end) {
    const start = performance.now()
    await get()
    times.push(performance.now() - start)
  }
  return times.sort((a, b) => a - b)
}

describe('a Redis that stalls the report connection', () => {
  it('drops and counts reports while requests keep flowing at normal speed', async (context) => {
    if (redis === undefined) return context.skip(`no private redis-server: ${unavailable}`)
    const agentId = 'stalled'
    const agent = createAgent({
      redis: redis.url,
      namespace: redis.namespace,
      agentId,
      windowMs: 50,
      reportTimeoutMs: 200,
    })
    const admin = redis.client()
    // A report stuck behind the pause fails at reportTimeoutMs, so the next window's report is tried again.
    const timedOut: string[] = []
    const onDropped = (event: unknown) => {
      const dropped = event as ReportDroppedEvent
      if (dropped.agentId === agentId && dropped.reason === 'failed')
        timedOut.push(dropped.error?.message ?? '')
    }
    subscribe(AGENT_CHANNELS.reportDropped, onDropped)
    try {
      await agent.ready()
      const key = `${redis.namespace}:k`
      await admin.set(key, 'v')
      const before = await timedGets(() => agent.get(key), 300)

      // Writes (XADD among them) wait for 1.5 s; reads (the requests here) do not.
      await admin.client('PAUSE', 1500, 'WRITE')
      const during = await timedGets(() => agent.get(key), 1200)
      const stats = agent.stats()
      expect(stats.reportsDropped).toBeGreaterThanOrEqual(5)
      expect(timedOut.length).toBeGreaterThanOrEqual(3)
      expect(timedOut[0]).toBe('report timed out after 200 ms')
      expect(percentile(during, 0.5)).toBeLessThan(Math.max(2, 3 * percentile(before, 0.5)))
      expect(percentile(during, 0.99)).toBeLessThan(50)
      expect(during.length).toBeGreaterThan(before.length)

      // Once writes flow again, a delivered report says how many were dropped before it.
      const stream = createNames(redis.namespace).reportStreamFor(agentId)
      let dropped = 0
      const deadline = performance.now() + 3000
      while (dropped === 0 && performance.now() < deadline) {
        const entries = await admin.xrange(stream, '-', '+')
        for (const [, fields] of entries) {
          dropped = Math.max(
            dropped,
            decodeReport(fields[fields.indexOf(STREAM_FIELD) + 1] as string).dropped,
          )
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(dropped).toBeGreaterThanOrEqual(1)
      // One report in flight at most, the rest dropped: the stream holds far fewer entries than windows passed.
      expect(agent.stats().reportsSent + agent.stats().reportsDropped).toBeGreaterThan(30)
    } finally {
      unsubscribe(AGENT_CHANNELS.reportDropped, onDropped)
      await agent.close()
    }
  })
})

describe('close() on a Redis that stalls every command', () => {
  it('ends within closeTimeoutMs instead of waiting for Redis', async (context) => {
    if (redis === undefined) return context.skip(`no private redis-server: ${unavailable}`)
    const agent = createAgent({
      redis: redis.url,
      namespace: redis.namespace,
      agentId: 'stalled-close',
      closeTimeoutMs: 300,
    })
    const admin = redis.client()
    await agent.ready()
    await agent.get(`${redis.namespace}:k`)

    // Every client's commands (UNSUBSCRIBE, the last report's XADD, QUIT) wait 2 s: longer than close() may take.
    await admin.client('PAUSE', 2000, 'ALL')
    const start = performance.now()
    await agent.close()
    const took = performance.now() - start
    expect(took).toBeGreaterThanOrEqual(250)
    expect(took).toBeLessThan(600)
    const clients = (await admin.client('LIST')) as string
    expect(clients).not.toContain(':stalled-close ')
  })
})
