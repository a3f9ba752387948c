import { createNames } from '@heatsink/protocol'
import { testNamespace, usePrivateRedis } from '@heatsink/test'
import { Redis as PlainRedis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent, Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { FreezingForwarder } from '../support/freezing-forwarder.js'
import { waitFor } from '../support/helpers.js'
import { killTrackingDuringFill, settledWithin, trackingClientId } from '../support/tracking-loss.js'

const redis = usePrivateRedis()
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

// What this file asserts, from the moment the tracking connection is gone (the kill answered): every read that
// waited on its fill answered from Redis within this. Loose for a loaded machine: the close is reported at once
// and the read is one round trip; before reads waited forever.
const AFTER_KILL_MS = 1000

function plain(url = redis().url): PlainRedis {
  const client = new PlainRedis(url)
  open.push({ close: () => client.disconnect() })
  return client
}

function dropIn(namespace: string, port: number, fillTimeoutMs: number): Redis {
  const client = new Redis({ port, host: '127.0.0.1', heatsink: { namespace, l1: { fillTimeoutMs } } })
  open.push({ close: () => client.quit().catch(() => {}) })
  return client
}

/**
 * Registers `keys` local_cache and waits until `on` has them so and the first one's prefill (its GET reply, made on
 * promotion) is in: a prefill still in flight would be one more fill to abandon. The first key (a string) is then
 * written again, so that the next read of it fills.
 */
async function promote(
  on: Pick<Redis['heatsink'], 'mitigation' | 'stats'>,
  admin: PlainRedis,
  namespace: string,
  ...keys: string[]
): Promise<void> {
  await publishRegistry(admin, createNames(namespace), ...keys.map((key) => ({ key })))
  await waitFor(
    () => keys.every((key) => on.mitigation(key) === 'local_cache') && on.stats().l1Entries >= 1,
    'the promotion and its prefills',
  )
  const first = keys[0] as string
  await admin.set(first, (await admin.get(first)) ?? '')
  await waitFor(() => on.stats().l1Entries === 0, 'the prefill invalidated')
}

describe('a fill whose tracking connection is lost', () => {
  it('is abandoned at once: every GET and HGETALL waiting on it is answered from Redis', async () => {
    const namespace = testNamespace()
    const admin = plain()
    // A fill deadline far beyond the bound: only the loss of the connection can settle these reads in time.
    const client = dropIn(namespace, Number(new URL(redis().url).port), 60_000)
    await client.heatsink.ready()
    const [key, hash] = [`${namespace}:hot`, `${namespace}:hash`]
    await admin.set(key, 'value')
    await admin.hset(hash, { f: '1' })
    await promote(client.heatsink, admin, namespace, key, hash)

    const { reads, killedAt } = await killTrackingDuringFill<unknown>(
      admin,
      await trackingClientId(admin),
      () => [
        ...Array.from({ length: 50 }, () => client.get(key)),
        ...Array.from({ length: 50 }, () => client.hgetall(hash)),
      ],
    )
    const { outcomes } = await settledWithin(reads, killedAt, AFTER_KILL_MS)
    expect(outcomes.slice(0, 50)).toEqual(Array(50).fill({ status: 'fulfilled', value: 'value' }))
    expect(outcomes.slice(50)).toEqual(Array(50).fill({ status: 'fulfilled', value: { f: '1' } }))
    // One fill per command form, each abandoned once, whatever the number of reads on it.
    expect(client.heatsink.stats().l1FillsAbandoned).toBe(2)

    // Tracking comes back by itself, L1 with it, and a later write is seen.
    await waitFor(
      async () => {
        const hits = client.heatsink.stats().l1Hits
        expect(await client.get(key)).toBe('value')
        return client.heatsink.stats().l1Hits > hits
      },
      'an L1 hit after the reconnect',
      3000,
    )
    await admin.set(key, 'next')
    await waitFor(async () => (await client.get(key)) === 'next', 'the write after the reconnect', 1000)
  })

  it("settles agent.get the same way (createAgent's front door)", async () => {
    const namespace = testNamespace()
    const admin = plain()
    const agent = createAgent({ redis: redis().url, namespace, l1: { fillTimeoutMs: 60_000 } })
    open.push(agent)
    await agent.ready()
    const key = `${namespace}:hot`
    await admin.set(key, 'value')
    await promote(agent, admin, namespace, key)
    // A write through the agent empties its L1 entry, so the next reads fill.
    await agent.set(key, 'written')

    const { reads, killedAt } = await killTrackingDuringFill(admin, await trackingClientId(admin), () =>
      Array.from({ length: 50 }, () => agent.get(key)),
    )
    const { outcomes } = await settledWithin(reads, killedAt, AFTER_KILL_MS)
    expect(outcomes).toEqual(Array(50).fill({ status: 'fulfilled', value: 'written' }))
    expect(agent.stats().l1FillsAbandoned).toBe(1)
  })
})

describe('a fill whose tracking connection stalls without closing', () => {
  const FILL_TIMEOUT_MS = 200

  it('is abandoned after l1.fillTimeoutMs, its reads answered from Redis, and its late reply stores nothing', async () => {
    const namespace = testNamespace()
    const admin = plain()
    const forwarder = new FreezingForwarder({ host: '127.0.0.1', port: Number(new URL(redis().url).port) })
    open.push(forwarder)
    const client = dropIn(namespace, await forwarder.start(), FILL_TIMEOUT_MS)
    await client.heatsink.ready()
    const key = `${namespace}:hot`
    await admin.set(key, 'value')
    await promote(client.heatsink, admin, namespace, key)

    forwarder.freeze('heatsink:track:')
    expect(forwarder.frozen).toBe(1)
    const sent = performance.now()
    const reads = Array.from({ length: 50 }, () => client.get(key))
    const { outcomes, lastMs } = await settledWithin(reads, sent, FILL_TIMEOUT_MS + AFTER_KILL_MS)
    expect(outcomes).toEqual(Array(50).fill({ status: 'fulfilled', value: 'value' }))
    // They waited for the deadline (timers fire at it or after), not for a reply.
    expect(lastMs).toBeGreaterThanOrEqual(FILL_TIMEOUT_MS - 1)
    expect(client.heatsink.stats().l1FillsAbandoned).toBe(1)

    // The key changes, then the stalled connection delivers the fill's reply with the old value: it must not
    // reach L1, whose later fills are the new value's.
    await admin.set(key, 'next')
    forwarder.thaw()
    await waitFor(async () => {
      const hits = client.heatsink.stats().l1Hits
      expect(await client.get(key)).toBe('next')
      return client.heatsink.stats().l1Hits > hits
    }, 'an L1 hit after the thaw')
    for (let i = 0; i < 100; i++) expect(await client.get(key)).toBe('next')
  })
})
