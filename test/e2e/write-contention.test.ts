import { Redis as HeatsinkRedis } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import { encodeReport, STREAM_FIELD, WIRE_VERSION } from '@heatsink/protocol'
import { createProxy, type RespProxy } from '@heatsink/proxy'
import { usePrivateRedis, useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessAggregator } from './support/in-process.js'

const redis = usePrivateRedis()
const postgres = useTestPostgres({ scope: 'all' })

const NAMESPACE = 'contention-e2e'

interface Stats {
  watchAbortsPerSecond: number
  contended: boolean
}

describe('write contention: transactions aborted by WATCH, counted by the drop-in and the proxy', () => {
  let aggregator: Aggregator
  let proxy: RespProxy
  let dropIn: HeatsinkRedis
  let viaProxy: Redis
  let writer: Redis

  beforeAll(async () => {
    aggregator = inProcessAggregator({
      redisUrl: redis().url,
      databaseUrl: postgres().url,
      namespace: NAMESPACE,
    })
    await aggregator.start()
    dropIn = new HeatsinkRedis(redis().url, {
      heatsink: { namespace: NAMESPACE, agentId: 'contention-drop-in' },
    })
    await dropIn.heatsink.ready()
    let port: number
    ;({ proxy, port } = await createProxy({
      backend: redis().url,
      port: 0,
      heatsink: { namespace: NAMESPACE, agentId: 'contention-proxy' },
    }))
    await proxy.agent.ready()
    viaProxy = new Redis(port)
    // The other writer: a plain client straight to Redis, so its writes are nobody's transactions.
    writer = new Redis(redis().url)
  }, 60_000)

  afterAll(async () => {
    await viaProxy?.quit()
    await writer?.quit()
    await dropIn?.quit()
    await proxy?.close(1000)
    await aggregator?.stop()
  })

  const stats = async (key: string): Promise<Stats | undefined> => {
    const response = await fetch(`${aggregator.url()}/hotkeys/${encodeURIComponent(key)}/stats`)
    return response.status === 200 ? ((await response.json()) as Stats) : undefined
  }

  // An optimistic update that loses: the key is written by another client between WATCH and EXEC.
  const losingUpdate = async (client: Redis, key: string) => {
    await client.watch(key)
    const seen = await client.get(key)
    await writer.set(key, `${Number(seen ?? 0) + 1}`)
    return client.multi().set(key, 'mine').exec()
  }

  // Aborted transactions on `key` at about `perSecond` until `stop()` holds.
  const contend = async (client: Redis, key: string, perSecond: number, stop: () => boolean) => {
    let aborted = 0
    while (!stop()) {
      if ((await losingUpdate(client, key)) === null) aborted++
      await new Promise((resolve) => setTimeout(resolve, 1000 / perSecond))
    }
    return aborted
  }

  it.each([
    ['the drop-in ioredis client', () => dropIn as unknown as Redis, 'contention:drop-in:balance'],
    ['a plain client through the proxy', () => viaProxy, 'contention:proxy:balance'],
  ])(
    'flags a key with sustained contention seen through %s',
    async (_, client, key) => {
      // A transaction that wins is not an abort.
      await client().watch(key)
      expect(await client().multi().set(key, '0').exec()).toEqual([[null, 'OK']])

      // About 25 aborts a second, above the default rule's 10 a second, until the key is flagged: three windows.
      const began = Date.now()
      let flagged: Stats | undefined
      const done = () => flagged !== undefined || Date.now() - began > 12_000
      const contention = contend(client(), key, 25, done)
      let partial: Stats | undefined
      while (!done()) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        const found = await stats(key)
        if (found?.contended === true) flagged = found
        else if (found !== undefined && found.watchAbortsPerSecond > 0) partial ??= found
      }
      const aborted = await contention
      expect(aborted).toBeGreaterThan(30)
      expect(flagged, 'flagged within 12 s').toBeDefined()
      console.log(
        `${key}: flagged ${Date.now() - began} ms after the aborts began: ${JSON.stringify(flagged)}`,
      )
      expect(flagged?.watchAbortsPerSecond).toBeGreaterThanOrEqual(10)
      expect(flagged?.watchAbortsPerSecond).toBeLessThanOrEqual(40)
      // Before three windows of it, the aborts showed without the flag.
      expect(partial?.contended).toBe(false)
    },
    30_000,
  )

  it('sets aside a malformed watchAborts and counts it, applying the rest of the report', async () => {
    const window = Math.floor(Date.now() / 1000) * 1000 - 1000
    const report = encodeReport({
      v: WIRE_VERSION,
      kind: 'report',
      agentId: 'contention-bad-field',
      seq: 1,
      windowStart: window,
      windowMs: 1000,
      total: 5,
      dropped: 0,
      candidates: [['contention:bad-field', 5, 5, 0]],
      watchAborts: [['contention:bad-field', -3]],
    })
    await writer.xadd(aggregator.names.reportStreamFor('contention-bad-field'), '*', STREAM_FIELD, report)
    const counted = async () => {
      const text = await (await fetch(`${aggregator.url()}/metrics`)).text()
      return /^heatsink_report_fields_set_aside_total\{field="watchAborts"\} 1$/m.test(text)
    }
    let ok = false
    const deadline = Date.now() + 5000
    while (!ok && Date.now() < deadline) {
      ok = await counted()
      if (!ok) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(ok).toBe(true)
    // The report itself was applied: its agent is listed, nothing went to the dead letters.
    const agents = (await (await fetch(`${aggregator.url()}/agents`)).json()) as {
      agents: { agentId: string }[]
    }
    expect(agents.agents.map((agent) => agent.agentId)).toContain('contention-bad-field')
    expect(await writer.xlen(aggregator.names.deadLetterStream)).toBe(0)
  })
})
