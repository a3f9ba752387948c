import { Redis } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import { pacedReads, useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { inProcessAggregator } from './support/in-process.js'

const redis = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })

const WINDOW_MS = 500
const HOT_RPS = 200
// Twice the threshold, every request a write (or a read of the same kind): write-hot by any measure.
const RPS = 400

/**
 * Which keys the control plane splits by itself: agents (the ioredis front door, whose command router serves the
 * proxy too) report the command forms they see on each tracked key, and only a key whose forms are all one split
 * kind's is split; an automatic split that meets a foreign command is demoted.
 */
describe('end to end: a key is split automatically only when its commands are one split kind', () => {
  let aggregator: Aggregator
  let client: Redis
  const stops: Array<() => void> = []
  const key = (name: string) => `${redis().namespace}:${name}`

  beforeAll(async () => {
    aggregator = inProcessAggregator(
      { redisUrl: redis().url, databaseUrl: postgres().url, namespace: redis().namespace },
      { HEATSINK_HOT_RPS: String(HOT_RPS), HEATSINK_WINDOW_MS: String(WINDOW_MS) },
    )
    await aggregator.start()
    client = new Redis(redis().url, {
      heatsink: { namespace: redis().namespace, agentId: 'split-eligibility', windowMs: WINDOW_MS },
    })
    await client.heatsink.ready()
  }, 60_000)

  afterEach(() => {
    for (const stop of stops.splice(0)) stop()
  })

  afterAll(async () => {
    await client?.quit()
    await aggregator?.stop()
  })

  // Sends `command` RPS times a second until the test ends; the n-th call's arguments come from `args(n)`.
  function drive(args: (n: number) => [string, ...Array<string | number>]): void {
    let n = 0
    stops.push(
      pacedReads(RPS, () => {
        const [command, ...rest] = args(n++)
        void client.call(command, ...rest).catch(() => {})
      }),
    )
  }

  const entry = async (name: string) => (await aggregator.registry.list()).find((e) => e.key === name)

  async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const value = await check()
      if (value !== undefined) return value
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  // GET /hotkeys/{key}/stats; undefined (404) until the control plane has heard of the key.
  async function stats(name: string) {
    const reply = await aggregator.app.inject({ url: `/hotkeys/${encodeURIComponent(name)}/stats` })
    if (reply.statusCode === 404) return undefined
    expect(reply.statusCode).toBe(200)
    return reply.json() as { commandForms: string[]; splitKind: string | null; requestsPerSecond: number }
  }

  const hot = (name: string) => async () =>
    ((await stats(name))?.requestsPerSecond ?? 0) > HOT_RPS || undefined

  // Long enough for several windows to cross the threshold and be judged.
  const hotForAWhile = () => new Promise((resolve) => setTimeout(resolve, 6 * WINDOW_MS))

  it('splits a counter hot by INCR alone, and never a set hot by SADD and SMEMBERS', async () => {
    const counter = key('likes')
    const set = key('viewers')
    drive(() => ['incr', counter])
    drive((n) => (n % 4 === 3 ? ['smembers', set] : ['sadd', set, `viewer-${n % 50}`]))
    expect(await until('the counter split', () => entry(counter))).toMatchObject({
      mitigation: 'split',
      source: 'auto',
    })
    await until('the set hot', hot(set))
    await hotForAWhile()
    // SADD's counts and SMEMBERS' order cannot match an unsplit set's: the data plane would fold it at once.
    expect(await entry(set)).toBeUndefined()
    expect(await stats(counter)).toMatchObject({ commandForms: ['counter-write'], splitKind: 'counter' })
    expect(await stats(set)).toMatchObject({ commandForms: ['set-split'], splitKind: null })
  }, 30_000)

  it('leaves unmitigated a counter reset now and then by SET, and a string hot by APPEND and GETRANGE', async () => {
    const counter = key('resets')
    const text = key('log')
    drive((n) => (n % 40 === 0 ? ['set', counter, 0] : ['incr', counter]))
    drive((n) => (n % 2 === 0 ? ['append', text, 'x'] : ['getrange', text, 0, 3]))
    await until('the counter hot', hot(counter))
    await until('the string hot', hot(text))
    await hotForAWhile()
    // The documented alternative for a write-hot key that is not one split kind: no mitigation at all.
    expect(await entry(counter)).toBeUndefined()
    expect(await entry(text)).toBeUndefined()
    const events = await aggregator.app.inject({ url: `/events?key=${encodeURIComponent(counter)}` })
    expect(events.json()).toEqual({ events: [], missStorms: [] })
    expect(await stats(counter)).toMatchObject({ commandForms: ['counter-write', 'set'], splitKind: null })
    expect(await stats(text)).toMatchObject({ commandForms: ['string-other'], splitKind: null })
  }, 30_000)

  it('demotes a split counter within two windows of a foreign command, and does not split it again', async () => {
    const counter = key('views')
    drive(() => ['incr', counter])
    await until('the split', () => entry(counter))
    const sentAt = Date.now()
    await client.call('getrange', counter, 0, 1)
    await until('the demotion', async () => ((await entry(counter)) === undefined ? 1 : undefined))
    const demotedIn = Date.now() - sentAt
    const events = (
      await aggregator.app.inject({ url: `/events?key=${encodeURIComponent(counter)}` })
    ).json() as { events: Array<{ type: string; reason: string }> }
    expect(events.events[0]).toMatchObject({ type: 'demote' })
    expect(events.events[0]?.reason).toContain('counter-write, string-other')
    // The bound the documentation states, two windows, with a third for delivery on a loaded machine.
    expect(demotedIn).toBeLessThan(3 * WINDOW_MS)
    await hotForAWhile()
    expect(await entry(counter)).toBeUndefined()
  }, 30_000)
})
