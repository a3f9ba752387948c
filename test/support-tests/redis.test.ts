import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTestRedis, type TestRedis, TestServiceMissingError, useTestRedis } from '../support/index.js'

describe('createTestRedis', () => {
  const created: TestRedis[] = []
  const make = () => {
    const redis = createTestRedis()
    created.push(redis)
    return redis
  }
  afterEach(async () => {
    await Promise.all(created.splice(0).map((redis) => redis.cleanup()))
  })

  it('gives each test a random hs-test- namespace that no other one sees', async () => {
    const a = make()
    const b = make()
    expect(a.namespace).toMatch(/^hs-test-[0-9a-f]{12}$/)
    expect(b.namespace).not.toBe(a.namespace)

    await a.client().set(`${a.namespace}:k`, 'a')
    await b.client().set(`${b.namespace}:k`, 'b')

    expect(await a.keys()).toEqual([`${a.namespace}:k`])
    expect(await b.keys()).toEqual([`${b.namespace}:k`])
  })

  it('cleanup deletes every key of its namespace, of any type, and no key outside it', async () => {
    const redis = make()
    const neighbour = make()
    const client = redis.client()
    const writes = client.pipeline()
    // More keys than one SCAN batch, so the sweep must follow the cursor.
    for (let index = 0; index < 2_500; index++) writes.set(`${redis.namespace}:s:${index}`, index)
    writes.hset(`${redis.namespace}:h`, 'field', 'value')
    writes.xadd(`${redis.namespace}:x`, '*', 'field', 'value')
    writes.set(`${neighbour.namespace}:kept`, 'yes')
    writes.set(`x-${redis.namespace}`, 'not a prefix match')
    await writes.exec()

    await redis.cleanup()

    expect(client.status).toBe('end')
    expect(await redis.keys()).toEqual([])
    const outside = neighbour.client()
    try {
      expect(await outside.get(`${neighbour.namespace}:kept`)).toBe('yes')
      expect(await outside.get(`x-${redis.namespace}`)).toBe('not a prefix match')
    } finally {
      await outside.del(`x-${redis.namespace}`)
    }
  })

  it('says the global setup did not run when REDIS_URL is missing', () => {
    vi.stubEnv('REDIS_URL', undefined)
    try {
      expect(() => createTestRedis()).toThrow(TestServiceMissingError)
      expect(() => createTestRedis()).toThrow(/REDIS_URL is not set.*global setup/)
    } finally {
      vi.unstubAllEnvs()
    }
  })
})

describe('useTestRedis', () => {
  const redis = useTestRedis()
  const seen: string[] = []

  it('provides a TestRedis inside a test', async () => {
    seen.push(redis().namespace)
    await redis().client().set(`${redis().namespace}:k`, '1')
    expect(await redis().keys()).toEqual([`${redis().namespace}:k`])
  })

  it('gives the next test a fresh namespace, the previous one already swept', async () => {
    const [previous] = seen
    seen.push(redis().namespace)
    expect(redis().namespace).not.toBe(previous)
    const leftovers = await createTestRedis({ namespace: previous }).keys()
    expect(leftovers).toEqual([])
  })
})
