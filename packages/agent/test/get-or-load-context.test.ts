import { createNames } from '@heatsink/protocol'
import { ManualClock } from '@heatsink/sketch'
import { decodeEnvelope } from '@heatsink/stampede'
import { useTestRedis } from '@heatsink/test'
import type { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis as HeatsinkRedis, type LoadContext } from '../src/index.js'
import { publishRegistry } from '../src/testing.js'
import { deferred, useAgents, waitFor } from './support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)
const START = 1_700_000_000_000
// Leases are real Redis TTLs: long ones keep them from running out while a manual clock stands still.
const STAMPEDE = { leaseMs: 60_000 }

function keyOf(name: string): string {
  return `${redis().namespace}:ctx:${name}`
}

/** A loader that keeps each call's context and settles when the test says. */
function contextLoader<T>() {
  const contexts: LoadContext<T>[] = []
  const results: Array<ReturnType<typeof deferred<T>>> = []
  const loader = (context: LoadContext<T>): Promise<T> => {
    contexts.push(context)
    const result = deferred<T>()
    results.push(result)
    return result.promise
  }
  return { loader, contexts, results }
}

/** What the rejection of `promise` was, or 'resolved'. */
function outcome(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  )
}

describe('getOrLoad: AbortSignal and the loader context', () => {
  it('rejects a caller whose signal has already fired with its reason, and loads nothing', async () => {
    const agent = newAgent({ stampede: STAMPEDE })
    await agent.ready()
    const reason = new Error('request cancelled')
    let calls = 0
    const call = agent.getOrLoad(keyOf('a'), () => ++calls, {
      ttlSeconds: 60,
      signal: AbortSignal.abort(reason),
    })
    await expect(call).rejects.toBe(reason)
    expect(calls).toBe(0)
  })

  it('lets one of two concurrent callers abort at once while the load goes on for the other and is cached', async () => {
    const agent = newAgent({ stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('two-callers')
    const { loader, contexts, results } = contextLoader<string>()
    const leaving = new AbortController()
    const first = outcome(agent.getOrLoad(key, loader, { ttlSeconds: 60, signal: leaving.signal }))
    const second = agent.getOrLoad(key, loader, { ttlSeconds: 60 })
    await waitFor(() => contexts.length === 1, 'the load')

    const reason = new Error('client went away')
    leaving.abort(reason)
    // The aborted caller is answered before the load ends: nothing else has happened meanwhile.
    expect(await first).toBe(reason)
    expect(contexts[0]?.signal.aborted).toBe(false)

    results[0]?.resolve('loaded')
    expect(await second).toBe('loaded')
    expect(contexts).toHaveLength(1)
    const stored = await redis().client().get(key)
    expect(decodeEnvelope(stored ?? '')?.payload).toBe('"loaded"')
  })

  it("fires the loader's signal when every caller has aborted, and caches nothing", async () => {
    const agent = newAgent({ stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('all-leave')
    const { loader, contexts, results } = contextLoader<string>()
    const callers = [new AbortController(), new AbortController()]
    const calls = callers.map((c) =>
      outcome(agent.getOrLoad(key, loader, { ttlSeconds: 60, signal: c.signal })),
    )
    await waitFor(() => contexts.length === 1, 'the load')
    const signal = contexts[0]?.signal as AbortSignal

    callers[0]?.abort(new Error('first gone'))
    expect(signal.aborted).toBe(false)
    const last = new Error('second gone')
    callers[1]?.abort(last)
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe(last)
    expect((await Promise.all(calls)).map((error) => (error as Error).message)).toEqual([
      'first gone',
      'second gone',
    ])

    // The loader honours its signal and rejects: Redis stays empty, the lease is released, the next call loads.
    results[0]?.reject(signal.reason)
    await waitFor(
      async () => (await redis().client().exists(createNames(redis().namespace).leaseKey(key))) === 0,
      'lease released',
    )
    expect(await redis().client().exists(key)).toBe(0)
    expect(await agent.getOrLoad(key, () => 'next', { ttlSeconds: 60 })).toBe('next')
  })

  it("keeps the load going when callers only pass their maxWaitMs: the loader's signal stays quiet", async () => {
    const agent = newAgent({ stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('timeout')
    const { loader, contexts, results } = contextLoader<string>()
    const call = outcome(agent.getOrLoad(key, loader, { ttlSeconds: 60, maxWaitMs: 20 }))
    expect(await call).toMatchObject({ code: 'E_LOAD_TIMEOUT' })
    expect(contexts[0]?.signal.aborted).toBe(false)
    results[0]?.resolve('late')
    await waitFor(async () => (await redis().client().exists(key)) === 1, 'the late value stored')
  })

  it('stores the TTL the loader sets with ctx.setTtl', async () => {
    const agent = newAgent({ stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('set-ttl')
    const value = await agent.getOrLoad(
      key,
      (ctx) => {
        ctx.setTtl(2_000)
        return 'token'
      },
      { ttlSeconds: 3600, jitter: 0 },
    )
    expect(value).toBe('token')
    const pttl = await redis().client().pttl(key)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(2_000)
    await expect(
      agent.getOrLoad(keyOf('bad-ttl'), (ctx) => ctx.setTtl(-1), { ttlSeconds: 60 }),
    ).rejects.toMatchObject({ code: 'E_INVALID_STAMPEDE_OPTION', option: 'setTtl' })
  })

  it('hands callers the value of a loader that calls ctx.skip() without caching it', async () => {
    const agent = newAgent({ stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('skip')
    let calls = 0
    const loader = (ctx: LoadContext<string>) => {
      calls++
      ctx.skip()
      return 'partial result'
    }
    expect(await agent.getOrLoad(key, loader, { ttlSeconds: 60 })).toBe('partial result')
    expect(await redis().client().exists(key)).toBe(0)
    expect(await agent.getOrLoad(key, loader, { ttlSeconds: 60 })).toBe('partial result')
    expect(calls).toBe(2)
    // `return ctx.skip()`, bentocache's idiom, answers "not found" and caches that neither.
    expect(await agent.getOrLoad(key, (ctx) => ctx.skip(), { ttlSeconds: 60 })).toBeUndefined()
    expect(await redis().client().exists(key)).toBe(0)
  })

  it('offers the expired value as ctx.gracedEntry, and none on a first load', async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({ clock, stampede: STAMPEDE })
    await agent.ready()
    const key = keyOf('graced')
    const seen: Array<LoadContext<{ v: number }>['gracedEntry']> = []
    const loader = (ctx: LoadContext<{ v: number }>) => {
      seen.push(ctx.gracedEntry)
      return { v: seen.length }
    }
    expect(await agent.getOrLoad(key, loader, { ttlSeconds: 10, jitter: 0 })).toEqual({ v: 1 })
    clock.advance(11_000) // past the logical TTL; Redis (real time) still holds the entry
    expect(await agent.getOrLoad(key, loader, { ttlSeconds: 10, jitter: 0 })).toEqual({ v: 2 })
    expect(seen).toEqual([undefined, { value: { v: 1 } }])
  })
})

describe('redis.heatsink.getOrLoad through the front door', () => {
  const clients: Redis[] = []
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.quit().catch(() => client.disconnect())
  })

  it('honours the signal and hands the loader its context, for a local_cache key too', async () => {
    const client = new HeatsinkRedis(redis().url, {
      heatsink: { namespace: redis().namespace, agentId: 'ctx-front-door', stampede: STAMPEDE },
    })
    clients.push(client)
    await client.heatsink.ready()
    const key = keyOf('front-door')
    await publishRegistry(redis().client(), createNames(redis().namespace), { key })
    await waitFor(() => client.heatsink.mitigation(key) === 'local_cache', 'promotion')

    const { loader, contexts, results } = contextLoader<string>()
    const leaving = new AbortController()
    const first = outcome(client.heatsink.getOrLoad(key, loader, { ttlSeconds: 60, signal: leaving.signal }))
    const second = client.heatsink.getOrLoad(key, loader, { ttlSeconds: 60 })
    await waitFor(() => contexts.length === 1, 'the load')
    leaving.abort('stop')
    expect(await first).toBe('stop')
    expect(contexts[0]).toMatchObject({ key, background: false, gracedEntry: undefined })
    results[0]?.resolve('value')
    expect(await second).toBe('value')
  })
})
