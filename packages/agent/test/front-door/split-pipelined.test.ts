import { createNames } from '@heatsink/protocol'
import { DelayingForwarder, useTestRedis } from '@heatsink/test'
import type { Redis as PlainRedis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'

const redis = useTestRedis()
const open: Array<{ close(): Promise<unknown> }> = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close().catch(() => {})
})

// Every reply reaches the agent this late: a round trip per split command would cost INCREMENTS of these.
const ROUND_TRIP_MS = 20
const INCREMENTS = 50
// Well above the few round trips the INCRs and the GET take together when they share them (about 5 measured), and
// far below what one round trip each costs (twice INCREMENTS): the margin is the delay's, not the machine's speed.
const GET_BOUND_MS = 20 * ROUND_TRIP_MS

// A drop-in client whose every connection reaches Redis through the delay, with `counter` split over 4 shards.
async function splitClient(counter: string): Promise<{ client: Redis; plain: PlainRedis }> {
  const { namespace, url } = redis()
  const plain = redis().client()
  const forwarder = new DelayingForwarder(
    { host: '127.0.0.1', port: Number(new URL(url).port) },
    ROUND_TRIP_MS,
  )
  open.push(forwarder)
  const through = new URL(url)
  through.port = String(await forwarder.start())
  const client = new Redis(through.toString(), { heatsink: { namespace } })
  open.push({ close: () => client.quit() })
  await client.heatsink.ready()
  await publishRegistry(plain, createNames(namespace), { key: counter, mitigation: 'split', splitFactor: 4 })
  await waitFor(() => client.heatsink.mitigation(counter) === 'split', 'the split registration', 5000)
  // For 2 s after a promotion writes stay on the key itself, until every agent has heard of the split.
  await new Promise((resolve) => setTimeout(resolve, 2100))
  // The first command classifies the key (a counter): the commands measured below are served over the shards.
  expect(await client.incr(counter)).toBe(1)
  return { client, plain }
}

describe('commands of one connection on a split counter', () => {
  it('do not hold up a GET of another key behind one round trip each, and answer in their order', async () => {
    const { namespace } = redis()
    const counter = `${namespace}:likes`
    const other = `${namespace}:other`
    const { client, plain } = await splitClient(counter)
    await plain.set(other, 'x')

    const start = performance.now()
    const incrs = Array.from({ length: INCREMENTS }, () => client.incr(counter))
    const got = client.get(other).then((value) => ({ value, ms: performance.now() - start }))
    const later = client.incr(counter)
    const { value, ms } = await got
    expect(value).toBe('x')
    expect(ms).toBeLessThan(GET_BOUND_MS)
    // Each INCR answers the value after its own increment, in the connection's order.
    expect(await Promise.all(incrs)).toEqual(Array.from({ length: INCREMENTS }, (_, i) => i + 2))
    expect(await later).toBe(INCREMENTS + 2)
    // The increments went to shards, not to the key Redis holds under the name.
    expect(Number(await plain.get(counter))).toBeLessThan(INCREMENTS + 2)
  }, 30_000)

  it("keep Redis's order in a pipeline mixing them with commands on other keys", async () => {
    const { namespace } = redis()
    const counter = `${namespace}:views`
    const other = `${namespace}:other`
    const { client } = await splitClient(counter)
    const replies = await client
      .pipeline()
      .incr(counter)
      .set(other, 'a')
      .incrby(counter, 5)
      .get(counter)
      .get(other)
      .incr(counter)
      .set(other, 'b')
      .decr(counter)
      .get(other)
      .exec()
    expect(replies?.map(([error, reply]) => error ?? reply)).toEqual([2, 'OK', 7, '7', 'a', 8, 'OK', 7, 'b'])
  }, 30_000)
})
