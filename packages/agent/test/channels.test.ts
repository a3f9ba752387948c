import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { publishRegistry, registerSilently } from '../src/testing.js'
import { captureLog, clientIdByName, controlledLoader, useAgents, waitFor } from './support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

const LOST = 'invalidation channel lost, L1 emptied'
const LIVE = 'invalidation channels live'

async function agentWithCachedKey(agentId: string) {
  const { namespace } = redis()
  const key = `${namespace}:hot`
  const plain = redis().client()
  await plain.set(key, 'v1')
  const capture = captureLog()
  const agent = newAgent({ agentId, log: capture.log, l1: { maxTtlMs: 60_000 } })
  await agent.ready()
  await publishRegistry(plain, createNames(namespace), { key })
  await waitFor(() => agent.stats().l1Entries === 1, 'L1 filled')
  expect(await agent.get(key)).toBe('v1')
  return { agent, key, plain, capture, admin: redis().client() }
}

describe('losing an invalidation channel', () => {
  it('a killed subscriber connection empties L1, which refills only once the channel is back', async () => {
    const { agent, key, plain, capture, admin } = await agentWithCachedKey('sub-killed')
    const oldId = await clientIdByName(admin, 'heatsink:sub:sub-killed')
    const lost = capture.next(LOST)
    const live = capture.next(LIVE)
    await admin.client('KILL', 'ID', String(oldId))
    await lost
    expect(agent.stats()).toMatchObject({ l1Entries: 0, invalidationChannelUp: false })
    expect(agent.stats().l1Invalidations.channelLoss).toBe(1)

    // Meanwhile a direct write happens, whose tracking message nobody receives: reads go to Redis.
    await plain.set(key, 'v2')
    expect(await agent.get(key)).toBe('v2')
    expect(await agent.get(key)).toBe('v2')
    expect(agent.stats().l1Entries).toBe(0)

    await live
    expect(agent.stats().invalidationChannelUp).toBe(true)
    // Tracking now redirects to the new subscriber connection.
    const newId = await clientIdByName(admin, 'heatsink:sub:sub-killed')
    expect(newId).not.toBe(oldId)
    const clients = (await admin.client('LIST')) as string
    const track = clients.split('\n').find((line) => line.includes(' name=heatsink:track:sub-killed '))
    expect(track).toContain(` redir=${newId} `)

    await waitFor(() => agent.stats().l1Entries === 1, 'L1 refilled')
    const hits = agent.stats().l1Hits
    expect(await agent.get(key)).toBe('v2')
    expect(agent.stats().l1Hits).toBe(hits + 1)
    // And invalidation works through the new redirect.
    await plain.set(key, 'v3')
    await waitFor(async () => (await agent.get(key)) === 'v3', 'the new value', 250)
  })

  it('a killed tracking connection empties L1 until tracking is on again', async () => {
    const { agent, key, plain, capture, admin } = await agentWithCachedKey('track-killed')
    const lost = capture.next(LOST)
    const live = capture.next(LIVE)
    await admin.client('KILL', 'ID', String(await clientIdByName(admin, 'heatsink:track:track-killed')))
    await lost
    expect(agent.stats()).toMatchObject({ l1Entries: 0, invalidationChannelUp: false })
    await plain.set(key, 'v2')
    expect(await agent.get(key)).toBe('v2')
    expect(agent.stats().l1Entries).toBe(0)
    await live
    await waitFor(() => agent.stats().l1Entries === 1, 'L1 refilled')
    await plain.set(key, 'v3')
    await waitFor(async () => (await agent.get(key)) === 'v3', 'the new value', 250)
  })

  it('reloads the registry after the subscriber reconnects, picking up changes it missed', async () => {
    const { agent, capture, admin } = await agentWithCachedKey('reload')
    const { namespace } = redis()
    const missed = `${namespace}:missed`
    // The hash changes but no event reaches the agent.
    await registerSilently(redis().client(), createNames(namespace), { key: missed, mitigation: 'coalesce' })
    expect(agent.mitigation(missed)).toBeUndefined()
    const live = capture.next(LIVE)
    await admin.client('KILL', 'ID', String(await clientIdByName(admin, 'heatsink:sub:reload')))
    await live
    await waitFor(() => agent.mitigation(missed) === 'coalesce', 'the reload')
    expect(agent.stats().registryReloads).toBeGreaterThanOrEqual(1)
  })

  it('a registry check finds a version it missed without any reconnect', async () => {
    const agent = newAgent({ registryCheckMs: 50 })
    await agent.ready()
    const { namespace } = redis()
    const key = `${namespace}:late`
    await registerSilently(redis().client(), createNames(namespace), { key })
    await waitFor(() => agent.mitigation(key) === 'local_cache', 'the periodic check')
  })

  it('counts bad messages on the registry and invalidation channels and keeps working', async () => {
    const { agent, key, plain } = await agentWithCachedKey('bad-messages')
    const names = createNames(redis().namespace)
    await plain.publish(names.registryChannel, 'garbage')
    await plain.publish(names.invalidationChannel, JSON.stringify({ v: 2, kind: 'invalidate' }))
    await waitFor(() => agent.stats().badMessages === 2, 'both bad messages')
    expect(await agent.get(key)).toBe('v1')
    expect(agent.stats().invalidationChannelUp).toBe(true)
  })

  it('a lost channel detaches the loads in flight: nothing of them is cached, and the next call loads', async () => {
    const capture = captureLog()
    const agent = newAgent({ agentId: 'load-lost', log: capture.log, stampede: { leaseMs: 60_000 } })
    await agent.ready()
    const key = `${redis().namespace}:loading`
    const leaseKey = createNames(redis().namespace).leaseKey(key)
    const plain = redis().client()
    const admin = redis().client()
    const loader = controlledLoader<string>()
    const inFlight = agent.getOrLoad(key, loader, { ttlSeconds: 60 })
    await waitFor(() => loader.calls === 1, 'the load')

    // Invalidations of the key may be lost while the channel is down: the load must not be cached.
    const lost = capture.next(LOST)
    const live = capture.next(LIVE)
    await admin.client('KILL', 'ID', String(await clientIdByName(admin, 'heatsink:sub:load-lost')))
    await lost
    await waitFor(async () => (await plain.exists(leaseKey)) === 0, 'the lease released')
    loader.call(0).resolve('loaded across the loss')
    expect(await inFlight).toBe('loaded across the loss')
    expect(await plain.exists(key)).toBe(0)

    await live
    const next = agent.getOrLoad(key, loader, { ttlSeconds: 60 })
    await waitFor(() => loader.calls === 2, 'a new load')
    loader.call(1).resolve('loaded again')
    expect(await next).toBe('loaded again')
    expect(await plain.get(key)).toContain('"loaded again"')
  })
})
