import { ensureRedis, freePort, type RunningService, startRedisCluster } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { listenToEveryChannel, testNamespace } from '@heatsink/test'
import { Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Agent } from '../src/agent.js'
import { createAgent } from '../src/create-agent.js'
import { InvalidAgentOptionError } from '../src/errors.js'
import { Redis as HeatsinkRedis } from '../src/ioredis/redis.js'
import type { AgentOptions } from '../src/options/agent-options.js'
import { publishRegistry, registerSilently } from '../src/testing.js'
import { captureLog, clientIdByName, controlledLoader, thrownBy, waitFor } from './support/helpers.js'

const LOST = 'invalidation channel lost, L1 emptied'
const LIVE = 'invalidation channels live'

// Private servers: the tests flush the data Redis, and listen to every channel of both.
let data: RunningService
let control: RunningService
const opened: Array<{ close(): unknown }> = []

beforeAll(async () => {
  data = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  control = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
}, 60_000)

afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close()
})

afterAll(async () => {
  await data?.stop()
  await control?.stop()
})

function client(url: string): Redis {
  const redis = new Redis(url)
  redis.on('error', () => {})
  opened.push({ close: () => redis.disconnect() })
  return redis
}

function agentOn(options: Partial<AgentOptions<Redis>> & { namespace: string }): Agent<Redis> {
  const agent = createAgent({ redis: data.url, control: control.url, ...options })
  opened.push({ close: () => agent.close() })
  return agent
}

/** An agent with a control Redis whose L1 holds `key`, promoted through the control Redis. */
async function agentWithCachedKey(agentId: string) {
  const namespace = testNamespace()
  const names = createNames(namespace)
  const key = `${namespace}:hot`
  await client(data.url).set(key, 'v1')
  const capture = captureLog()
  const agent = agentOn({ namespace, agentId, log: capture.log, l1: { maxTtlMs: 60_000 } })
  await agent.ready()
  await publishRegistry(client(control.url), names, { key })
  await waitFor(() => agent.stats().l1Entries === 1, 'L1 filled')
  return { agent, key, names, capture }
}

describe('an agent with a control Redis', () => {
  it('empties L1 when its control subscriber is lost, and once it is back reads the registry it missed', async () => {
    const { agent, key, names, capture } = await agentWithCachedKey('control-sub-killed')
    const onData = client(data.url)
    const onControl = client(control.url)
    const missed = `${names.namespace}:missed`
    await registerSilently(onControl, names, { key: missed, mitigation: 'coalesce' })
    const trackingSubscriber = await clientIdByName(onData, 'heatsink:sub:control-sub-killed')

    const lost = capture.next(LOST)
    const live = capture.next(LIVE)
    await onControl.client(
      'KILL',
      'ID',
      String(await clientIdByName(onControl, 'heatsink:sub:control-sub-killed')),
    )
    await lost
    expect(agent.stats()).toMatchObject({ l1Entries: 0, invalidationChannelUp: false })
    await live
    await waitFor(
      () => agent.mitigation(missed) === 'coalesce',
      'the registry read again from the control Redis',
    )
    await waitFor(() => agent.stats().l1Entries === 1, 'L1 refilled')
    // The data Redis's subscriber, and so tracking's redirect, was never touched.
    expect(await clientIdByName(onData, 'heatsink:sub:control-sub-killed')).toBe(trackingSubscriber)
    await onData.set(key, 'v2')
    await waitFor(async () => (await agent.get(key)) === 'v2', 'the new value', 250)
  })

  it('empties L1 when its tracking subscriber on the data Redis is lost, and again on FLUSHALL there', async () => {
    const { agent, key, capture } = await agentWithCachedKey('data-sub-killed')
    const onData = client(data.url)
    const lost = capture.next(LOST)
    const live = capture.next(LIVE)
    await onData.client('KILL', 'ID', String(await clientIdByName(onData, 'heatsink:sub:data-sub-killed')))
    await lost
    expect(agent.stats()).toMatchObject({ l1Entries: 0, invalidationChannelUp: false })
    await live
    await waitFor(() => agent.stats().l1Entries === 1, 'L1 refilled')

    // Redis's flush notification (a null invalidation) still empties L1; the registry, on C, survives the flush.
    const flushes = agent.stats().l1Invalidations.tracking
    await onData.flushall()
    await waitFor(() => agent.stats().l1Invalidations.tracking > flushes, 'the flush notification')
    expect(agent.stats().l1Entries).toBe(0)
    expect(agent.mitigation(key)).toBe('local_cache')
    expect(await agent.get(key)).toBeNull()
  })

  it("wakes another agent's getOrLoad waiter by an announcement on the control Redis, none on the data Redis", async () => {
    const namespace = testNamespace()
    const key = `${namespace}:loaded`
    const onData = await listenToEveryChannel(data.url)
    const onControl = await listenToEveryChannel(control.url)
    opened.push(onData, onControl)
    // A poll far longer than the test waits: only the announcement can wake the waiter in time.
    const stampede = { pollMs: 30_000, maxWaitMs: 60_000, leaseMs: 60_000 }
    const loading = agentOn({ namespace, agentId: 'loading', stampede })
    const waiting = agentOn({ namespace, agentId: 'waiting', stampede })
    await Promise.all([loading.ready(), waiting.ready()])
    const loader = controlledLoader<string>()
    const loaded = loading.getOrLoad(key, loader, { ttlSeconds: 60 })
    await waitFor(() => loader.calls === 1, 'the load')
    const waited = waiting.getOrLoad(key, loader, { ttlSeconds: 60 })
    await waitFor(() => waiting.stats().stampede.leaseWaits === 1, 'the wait on the lease')

    loader.call(0).resolve('loaded once')
    expect(await loaded).toBe('loaded once')
    const started = performance.now()
    expect(await waited).toBe('loaded once')
    expect(performance.now() - started).toBeLessThan(1000)
    expect(loader.calls).toBe(1)
    expect(onControl.channels).toContain(`${namespace}:filled`)
    expect(onData.channels.filter((channel) => channel.startsWith(`${namespace}:`))).toEqual([])
  })
})

describe('the control option', () => {
  const namespace = 'heatsink-options'

  it('must be a redis://, rediss:// or redis+sentinel:// URL, shown by its scheme only since the rest may hold a password', () => {
    for (const bad of ['http://user:s3cret@heatsink:6379', 'heatsink:6379', 'redis:///tmp/sock']) {
      const error = thrownBy(() => createAgent({ redis: data.url, control: bad, namespace }))
      expect(error).toBeInstanceOf(InvalidAgentOptionError)
      expect(error).toMatchObject({ option: 'control' })
      expect((error as Error).message).toMatch(
        /^control: must be a redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\/ URL/,
      )
      expect((error as Error).message).not.toContain('s3cret')
    }
    expect(thrownBy(() => createAgent({ redis: data.url, control: 42 as never, namespace }))).toMatchObject({
      option: 'control',
      message: 'control: must be a redis://, rediss:// or redis+sentinel:// URL or an ioredis Redis client',
    })
    // A Sentinel URL is read in full: the part that is wrong is named, the password is not shown.
    const sentinel = thrownBy(() =>
      createAgent({ redis: data.url, control: 'redis+sentinel://:s3cret@h1:26379,h2:x/mymaster', namespace }),
    )
    expect(sentinel).toMatchObject({ option: 'control' })
    expect((sentinel as Error).message).toMatch(/^control: .*sentinels/)
    expect((sentinel as Error).message).not.toContain('s3cret')
  })

  it('may be a Cluster, but not one with a keyPrefix', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      lazyConnect: true,
      redisOptions: { keyPrefix: 'app:' },
    })
    expect(
      thrownBy(() => createAgent({ redis: data.url, control: cluster as never, namespace })),
    ).toMatchObject({ option: 'control', message: 'control: clients with a keyPrefix are not supported' })
  })

  it('as a Cluster node URL makes ready() reject at once, naming the option; as an ioredis Cluster it works', async () => {
    const cluster = await startRedisCluster({ masters: 3 })
    opened.push({ close: () => cluster.stop() })
    const [node] = cluster.nodes
    const agent = createAgent({ redis: data.url, control: `redis://${node?.host}:${node?.port}`, namespace })
    opened.push({ close: () => agent.close() })
    const started = Date.now()
    const error = await agent.ready().catch((rejected: unknown) => rejected)
    expect(error).toBeInstanceOf(InvalidAgentOptionError)
    expect(error).toMatchObject({
      option: 'control',
      message:
        'control: names a node of a Redis Cluster (cluster_enabled:1); give an ioredis Cluster of it as control instead',
    })
    // Not the ready timeout (10 s): the node said what it is at the first connect.
    expect(Date.now() - started).toBeLessThan(5000)

    // The same Cluster given as an ioredis Cluster is a control Redis: ready, and registry events reach the agent.
    const onCluster = new Cluster([{ host: node?.host as string, port: node?.port as number }])
    opened.push({ close: () => onCluster.disconnect() })
    const agentOnCluster = createAgent({ redis: data.url, control: onCluster, namespace })
    opened.push({ close: () => agentOnCluster.close() })
    await agentOnCluster.ready()
    await publishRegistry(onCluster, createNames(namespace), { key: 'cluster-control:hot' })
    await waitFor(() => agentOnCluster.mitigation('cluster-control:hot') === 'local_cache', 'the promotion')
  }, 60_000)

  it("is checked as heatsink.control in the drop-in's options", () => {
    const error = thrownBy(
      () => new HeatsinkRedis(data.url, { lazyConnect: true, heatsink: { namespace, control: 'tcp://x' } }),
    )
    expect(error).toMatchObject({ option: 'heatsink.control' })
  })
})
