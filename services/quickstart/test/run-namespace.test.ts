import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  markRunning,
  otherRunsLive,
  RUN_NAMESPACE_PREFIX,
  removeAbandonedRuns,
  removeKeys,
  runNamespace,
} from '../src/run-namespace.js'

// The global test setup publishes the shared Redis in REDIS_URL; every key here is under generated namespaces
// of this file's own, removed at the end.
let redis: Redis
const made: string[] = []
const fresh = () => {
  const namespace = runNamespace({})
  made.push(namespace)
  return namespace
}

beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
})
afterAll(async () => {
  for (const namespace of made) await removeKeys(redis, `${namespace}:*`)
  await redis.quit()
})

describe('runNamespace', () => {
  it('gives every run a namespace of its own unless HEATSINK_NAMESPACE names one', () => {
    const one = runNamespace({})
    expect(one).toMatch(/^heatsink-quickstart-[0-9a-f]{8}$/)
    expect(runNamespace({})).not.toBe(one)
    expect(one.startsWith(RUN_NAMESPACE_PREFIX)).toBe(true)
    expect(runNamespace({ HEATSINK_NAMESPACE: 'mine' })).toBe('mine')
    expect(runNamespace({ HEATSINK_NAMESPACE: ' ' })).toMatch(/^heatsink-quickstart-/)
  })
})

describe('runs sharing one Redis', () => {
  it('removes what a killed run left, keeps what a live run has, and tells whether another run is live', async () => {
    const live = fresh()
    const killed = fresh()
    const mine = fresh()
    await redis.set(`${live}:registry:snapshot`, 'x')
    await redis.set(`${killed}:registry:snapshot`, 'x')
    await redis.set(`${killed}:reports:0`, 'x')
    const liveRun = await markRunning(redis, live)
    const myRun = await markRunning(redis, mine)

    const removed = await removeAbandonedRuns(redis)
    expect(removed).toContain(killed)
    expect(removed).not.toContain(live)
    expect(removed).not.toContain(mine)
    expect(await redis.exists(`${killed}:registry:snapshot`, `${killed}:reports:0`)).toBe(0)
    expect(await redis.get(`${live}:registry:snapshot`)).toBe('x')
    expect(await otherRunsLive(redis, mine)).toBe(true)

    // A run that stopped took its marker with it (a killed one's lapses within seconds).
    await liveRun.stop()
    expect(await redis.exists(`${live}:quickstart-alive`)).toBe(0)
    await myRun.stop()
  })
})
