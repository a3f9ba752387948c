import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { compareCommandTable, compareFuzz, MOST_UNSPREAD } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { startProxy, usePrivateRedis, waitFor } from './support/proxy-fixture.js'

const redis = usePrivateRedis()
const admins: Redis[] = []
afterEach(() => {
  for (const admin of admins.splice(0)) admin.disconnect()
})

function admin(): Redis {
  const client = new Redis(redis().url)
  admins.push(client)
  return client
}

const BINARY = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x41])

// A proxy, and how to register keys split over 4 shards in its namespace (resolving once it has them split).
async function proxied() {
  const running = await startProxy(redis().url)
  const split = async (keys: string[]) => {
    await publishRegistry(
      admin(),
      createNames(running.namespace),
      ...keys.map((key) => ({ key, mitigation: 'split' as const, splitFactor: 4 })),
    )
    await waitFor(() => keys.every((key) => running.proxy.agent.mitigation(key) === 'split'), 'the promotion')
  }
  return { ...running, split }
}

// A proxy with `names` registered split over 4 shards, once writes have left the base keys (2 s after promotion).
async function splitProxy(names: (namespace: string) => string[]) {
  const running = await startProxy(redis().url)
  const keys = names(running.namespace)
  await publishRegistry(
    admin(),
    createNames(running.namespace),
    ...keys.map((key) => ({ key, mitigation: 'split' as const, splitFactor: 4 })),
  )
  await waitFor(() => keys.every((key) => running.proxy.agent.mitigation(key) === 'split'), 'the promotion')
  await new Promise((resolve) => setTimeout(resolve, 2100))
  return { ...running, keys }
}

describe('split keys through the proxy answer as the unsplit key', () => {
  it('keeps binary values and set members byte for byte', async () => {
    const { client, keys } = await splitProxy((ns) => [`${ns}:bin`, `${ns}:members`])
    const [value, members] = keys as [string, string]
    const c = client()
    expect(await c.set(value, BINARY)).toBe('OK')
    expect(await c.getBuffer(value)).toEqual(BINARY)
    expect(await admin().getBuffer(value)).toEqual(BINARY)
    const other = Buffer.from([0xff, 0xfd, 0x00, 0x80, 0x41])
    expect(await c.sadd(members, BINARY, other)).toBe(2)
    expect((await c.smembersBuffer(members)).sort(Buffer.compare)).toEqual([other, BINARY])
  })

  it('counts on after a reset with SET: INCR; SET 0; INCR answers 1', async () => {
    const { client, keys, namespace } = await splitProxy((ns) => [`${ns}:counter`])
    const key = keys[0] as string
    const c = client()
    for (let i = 0; i < 10; i++) expect(await c.incr(key)).toBe(i + 1)
    // The increments went to shards: the key Redis holds under that name has not seen them all.
    expect(Number(await admin().get(key))).toBeLessThan(10)
    expect((await admin().keys(`${namespace}:split:*:d:${key}`)).length).toBeGreaterThan(0)
    expect(await c.set(key, '0')).toBe('OK')
    expect(await c.incr(key)).toBe(1)
    expect(await c.incr(key)).toBe(2)
    expect(await c.get(key)).toBe('2')
  })

  it("answers a pipeline's GET between two SETs with the first SET's value", async () => {
    const { client, keys } = await splitProxy((ns) => [`${ns}:ordered`, `${ns}:ordered-counter`])
    const [key, counter] = keys as [string, string]
    const c = client()
    const replies = await c.pipeline().set(key, 'v1').get(key).set(key, 'v2').exec()
    expect(replies).toEqual([
      [null, 'OK'],
      [null, 'v1'],
      [null, 'OK'],
    ])
    // Pipelined counter commands each answer the value after their own write, in order.
    const counted = await c.pipeline().incr(counter).incr(counter).get(counter).incrby(counter, 5).exec()
    expect(counted?.map(([, reply]) => reply)).toEqual([1, 2, '2', 7])
  })

  it('answers every command of the table as the unsplit key does, byte for byte, and leaves the same state', async () => {
    const { client, namespace, split } = await proxied()
    const result = await compareCommandTable({ client: client(), plain: admin(), prefix: namespace, split })
    expect(result.differences).toEqual([])
    expect(result.unspread.length).toBeLessThanOrEqual(MOST_UNSPREAD)
  }, 120_000)

  it.each([4, 5])(
    'seed %i: pipelines and transactions answer as on unsplit keys, binary values included',
    async (seed) => {
      const { client, namespace, split } = await proxied()
      const result = await compareFuzz(
        {
          client: client(),
          plain: admin(),
          splitName: (name) => `${namespace}:s:${name}`,
          unsplitName: (name) => `${namespace}:u:${name}`,
          split,
        },
        seed,
        8,
        100,
      )
      expect(result.differences).toEqual([])
    },
    60_000,
  )
})
