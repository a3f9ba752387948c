import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { DelayingForwarder } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { startProxy, usePrivateRedis, waitFor } from './support/proxy-fixture.js'

const redis = usePrivateRedis()
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const item of open.splice(0)) await item.close()
})

// Every reply reaches the proxy this late: a round trip per split command would cost INCREMENTS of these.
const ROUND_TRIP_MS = 20
const INCREMENTS = 50
// Well above the few round trips the INCRs and the GET take together when they share them, and far below what one
// round trip each costs (twice INCREMENTS): the margin is the delay's, not the machine's speed.
const GET_BOUND_MS = 20 * ROUND_TRIP_MS

describe('commands of one client connection on a split counter through the proxy', () => {
  it('do not hold up a GET of another key behind one round trip each, and answer in their order', async () => {
    const admin = new Redis(redis().url)
    open.push({ close: () => admin.disconnect() })
    const forwarder = new DelayingForwarder(
      { host: '127.0.0.1', port: Number(new URL(redis().url).port) },
      ROUND_TRIP_MS,
    )
    const through = new URL(redis().url)
    through.port = String(await forwarder.start())
    const { proxy, namespace, client } = await startProxy(through.toString())
    open.push(forwarder)
    const counter = `${namespace}:likes`
    const other = `${namespace}:other`
    await admin.set(other, 'x')
    await publishRegistry(admin, createNames(namespace), {
      key: counter,
      mitigation: 'split',
      splitFactor: 4,
    })
    await waitFor(() => proxy.agent.mitigation(counter) === 'split', 'the promotion')
    // For 2 s after a promotion writes stay on the key itself, until every agent has heard of the split.
    await new Promise((resolve) => setTimeout(resolve, 2100))
    const c = client()
    // The first command classifies the key (a counter): the commands measured below are served over the shards.
    expect(await c.incr(counter)).toBe(1)

    const start = performance.now()
    const incrs = Array.from({ length: INCREMENTS }, () => c.incr(counter))
    const got = c.get(other).then((value) => ({ value, ms: performance.now() - start }))
    const later = c.incr(counter)
    const { value, ms } = await got
    expect(value).toBe('x')
    expect(ms).toBeLessThan(GET_BOUND_MS)
    expect(await Promise.all(incrs)).toEqual(Array.from({ length: INCREMENTS }, (_, i) => i + 2))
    expect(await later).toBe(INCREMENTS + 2)
    expect(Number(await admin.get(counter))).toBeLessThan(INCREMENTS + 2)
  }, 30_000)
})
