import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import {
  AGENT_CHANNELS,
  type DemotedEvent,
  type InvalidatedEvent,
  type L1DroppedEvent,
  type LoadFailedEvent,
  type PromotedEvent,
  type ReportDroppedEvent,
} from '../src/index.js'
import { demoteRegistry, publishRegistry } from '../src/testing.js'
import { clientIdByName, useAgents, waitFor } from './support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)
const LONG_L1 = { maxTtlMs: 60_000 }

const subscriptions: Array<() => void> = []
afterEach(() => {
  for (const stop of subscriptions.splice(0)) stop()
})

/** Every message published on `name` by agent `agentId` while the test runs. */
function listen<T extends { agentId: string }>(name: string, agentId: string): T[] {
  const seen: T[] = []
  const onMessage = (message: unknown) => {
    if ((message as T).agentId === agentId) seen.push(message as T)
  }
  subscribe(name, onMessage)
  subscriptions.push(() => unsubscribe(name, onMessage))
  return seen
}

function keyOf(name: string): string {
  return `${redis().namespace}:events:${name}`
}

describe('diagnostics channels', () => {
  it('publishes promotions and demotions as the registry changes arrive', async () => {
    const agent = newAgent({ agentId: 'events-registry' })
    const promoted = listen<PromotedEvent>(AGENT_CHANNELS.promoted, agent.agentId)
    const demoted = listen<DemotedEvent>(AGENT_CHANNELS.demoted, agent.agentId)
    await agent.ready()
    const names = createNames(redis().namespace)
    const key = keyOf('hot')

    await publishRegistry(redis().client(), names, { key })
    await waitFor(() => promoted.length === 1, 'the promotion')
    await publishRegistry(redis().client(), names, { key, mitigation: 'coalesce' })
    await waitFor(() => promoted.length === 2, 'the change of mitigation')
    await demoteRegistry(redis().client(), names, key)
    await waitFor(() => demoted.length === 1, 'the demotion')

    expect(promoted).toEqual([
      { agentId: 'events-registry', key, mitigation: 'local_cache', previous: undefined },
      { agentId: 'events-registry', key, mitigation: 'coalesce', previous: 'local_cache' },
    ])
    expect(demoted).toEqual([{ agentId: 'events-registry', key, mitigation: 'coalesce' }])
  })

  it('publishes invalidations by where they came from, and the L1 entries they drop', async () => {
    const writer = newAgent({ agentId: 'events-writer', l1: LONG_L1 })
    const reader = newAgent({ agentId: 'events-reader', l1: LONG_L1 })
    const written = listen<InvalidatedEvent>(AGENT_CHANNELS.invalidated, writer.agentId)
    const heard = listen<InvalidatedEvent>(AGENT_CHANNELS.invalidated, reader.agentId)
    const dropped = listen<L1DroppedEvent>(AGENT_CHANNELS.l1Dropped, reader.agentId)
    await Promise.all([writer.ready(), reader.ready()])
    const key = keyOf('config')
    const plain = redis().client()
    await plain.set(key, 'v1')
    await publishRegistry(plain, createNames(redis().namespace), { key })
    const filled = () => reader.stats().l1Entries === 1 && writer.stats().l1Entries === 1
    await waitFor(filled, 'L1 filled on both agents')

    await writer.set(key, 'v2')
    await waitFor(() => heard.some((event) => event.source === 'pubsub'), "the writer's announcement")
    expect(written).toContainEqual({ agentId: 'events-writer', key, source: 'local' })
    expect(heard).toContainEqual({ agentId: 'events-reader', key, source: 'pubsub' })
    await waitFor(() => dropped.length > 0, 'the L1 entry dropped')
    expect(dropped[0]).toMatchObject({ key, reason: 'invalidated', cache: 'replies' })
    expect(['pubsub', 'tracking']).toContain(dropped[0]?.source)

    // A write that bypasses the agents reaches them through Redis tracking.
    expect(await reader.get(key)).toBe('v2')
    await waitFor(() => reader.stats().l1Entries === 1, 'L1 filled again')
    const before = heard.length
    await plain.set(key, 'v3')
    await waitFor(
      () => heard.slice(before).some((event) => event.source === 'tracking'),
      'the tracking message',
    )
    expect(heard.slice(before)).toContainEqual({ agentId: 'events-reader', key, source: 'tracking' })
  })

  it('publishes L1 entries evicted for room, and dropped when their key leaves local_cache', async () => {
    const agent = newAgent({ agentId: 'events-evict', l1: { ...LONG_L1, maxEntries: 512 } })
    const dropped = listen<L1DroppedEvent>(AGENT_CHANNELS.l1Dropped, agent.agentId)
    await agent.ready()
    const names = createNames(redis().namespace)
    // One more local_cache key than L1 holds: each promotion fills its key at once, so one entry must go.
    const keys = Array.from({ length: 513 }, (_, i) => keyOf(`k${i}`))
    await publishRegistry(redis().client(), names, ...keys.map((key) => ({ key })))
    await waitFor(() => agent.stats().l1Evictions >= 1, 'an eviction', 5000)
    const evicted = dropped.filter((event) => event.reason === 'evicted')
    expect(evicted.length).toBe(agent.stats().l1Evictions)
    expect(keys).toContain(evicted[0]?.key)
    expect(evicted[0]).toMatchObject({ source: undefined, cache: 'replies' })

    const kept = keys.find((key) => !evicted.some((event) => event.key === key)) as string
    await demoteRegistry(redis().client(), names, kept)
    await waitFor(() => dropped.some((event) => event.key === kept), 'the demoted key dropped')
    expect(dropped.find((event) => event.key === kept)).toMatchObject({
      reason: 'invalidated',
      source: 'registry',
    })
  })

  it('publishes reports dropped while the report connection is down', async () => {
    const agent = newAgent({ agentId: 'events-report', windowMs: 10 })
    const dropped = listen<ReportDroppedEvent>(AGENT_CHANNELS.reportDropped, agent.agentId)
    await agent.ready()
    await agent.get(keyOf('counted'))
    const admin = redis().client()
    await admin.client('KILL', 'ID', String(await clientIdByName(admin, 'heatsink:report:events-report')))
    await waitFor(() => dropped.length > 0, 'a dropped report', 5000)
    expect(dropped[0]).toMatchObject({ agentId: 'events-report', partial: false })
    expect(['disconnected', 'failed']).toContain(dropped[0]?.reason)
    expect(agent.stats().reportsDropped).toBeGreaterThanOrEqual(dropped.length)
  })

  it("publishes a loader's failure with its error", async () => {
    const agent = newAgent({ agentId: 'events-load' })
    const failed = listen<LoadFailedEvent>(AGENT_CHANNELS.loadFailed, agent.agentId)
    await agent.ready()
    const key = keyOf('report')
    const failure = new Error('database down')
    await expect(
      agent.getOrLoad(
        key,
        () => {
          throw failure
        },
        { ttlSeconds: 60 },
      ),
    ).rejects.toBe(failure)
    expect(failed).toEqual([{ agentId: 'events-load', key, error: failure, background: false }])
    expect(agent.stats().loadFailures).toBe(1)
  })
})
