import {
  ensureRedis,
  freePort,
  type RedisCluster,
  type RunningService,
  startRedisCluster,
} from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { testNamespace, useTestPostgres } from '@heatsink/test'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ControlFleet, startControlFleet } from './support/control-fleet.js'
import { promoteByRest, until } from './support/in-process.js'
import { expectL1Hit, readsWithin } from './support/l1-reads.js'

const postgres = useTestPostgres({ scope: 'all' })

const HOT_KEY = 'page:home'
const PROMOTED_KEY = 'page:promoted'

// The application's data on one private Redis (D); Heatsink's control Redis a private 3-master Redis Cluster with a
// replica per master (C), named by one of its nodes with HEATSINK_CONTROL_REDIS_CLUSTER=true; the drop-in is given
// an ioredis Cluster of it, as the application would build one.
describe('a control Redis on a Redis Cluster (HEATSINK_CONTROL_REDIS_CLUSTER=true)', () => {
  const namespace = testNamespace()
  const names = createNames(namespace)
  let data: RunningService
  let control: RedisCluster
  let fleet: ControlFleet
  const clients: Array<Redis | Cluster> = []

  const track = <T extends Redis | Cluster>(client: T): T => {
    client.on('error', () => {})
    clients.push(client)
    return client
  }

  beforeAll(async () => {
    data = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
    control = await startRedisCluster({ masters: 3, replicasPerMaster: 1 })
    const [node] = control.nodes
    fleet = await startControlFleet({
      name: 'cluster-control',
      namespace,
      dataUrl: data.url,
      databaseUrl: postgres().url,
      control: {
        url: `redis://${node?.host}:${node?.port}`,
        cluster: true,
        dropIn: track(new Cluster(control.nodes)),
      },
    })
  }, 60_000)

  afterAll(async () => {
    await fleet?.stop()
    for (const client of clients) client.disconnect()
    await data?.stop()
    await control?.stop()
  })

  it('detects a key read hot through the proxy and promotes it on every agent, then serves it from L1', async () => {
    await track(new Redis(data.url)).set(HOT_KEY, 'v1')
    const through = track(new Redis(fleet.proxyPort, '127.0.0.1', { maxRetriesPerRequest: 1 }))
    const started = Date.now()
    while (fleet.proxy.agent.mitigation(HOT_KEY) !== 'local_cache') {
      if (Date.now() - started > 15_000) throw new Error(`${HOT_KEY} not promoted within 15 s`)
      await Promise.all(Array.from({ length: 50 }, () => through.get(HOT_KEY)))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await until(
      'the promotion on the drop-in',
      () => fleet.dropIn.heatsink.mitigation(HOT_KEY) === 'local_cache',
    )
    await expectL1Hit(
      () => through.get(HOT_KEY),
      () => fleet.proxy.agent.stats().l1Hits,
      'v1',
    )
    // A write through the drop-in ends the proxy's L1 copy (tracking on D), and the reverse.
    await fleet.dropIn.set(HOT_KEY, 'v2')
    await readsWithin(() => through.get(HOT_KEY), 'v2')
    await through.set(HOT_KEY, 'v3')
    await readsWithin(() => fleet.dropIn.get(HOT_KEY), 'v3')
  }, 30_000)

  it('sends a REST promotion and demotion to every agent, with Heatsink state on the Cluster and none on D', async () => {
    const promoted = await promoteByRest(fleet.base, PROMOTED_KEY)
    expect(promoted.status).toBe(201)
    for (const mitigation of fleet.everyAgent()) {
      await until('the promotion on an agent', () => mitigation(PROMOTED_KEY) === 'local_cache')
    }
    const demoted = await fetch(`${fleet.base}/hotkeys/${encodeURIComponent(PROMOTED_KEY)}`, {
      method: 'DELETE',
    })
    expect(demoted.status).toBe(204)
    for (const mitigation of fleet.everyAgent()) {
      await until('the demotion on an agent', () => mitigation(PROMOTED_KEY) === undefined)
    }

    const onCluster = track(new Cluster(control.nodes))
    expect(await onCluster.hexists(names.registrySnapshotKey, 'snapshot')).toBe(1)
    for (const agentId of ['cluster-control-proxy', 'cluster-control-drop-in']) {
      expect(await onCluster.type(names.reportStreamFor(agentId))).toBe('stream')
    }
    const onData = track(new Redis(data.url))
    expect((await onData.keys('*')).sort()).toEqual([HOT_KEY, names.databaseMarkerKey].sort())
    expect((await fetch(`${fleet.base}/readyz`)).status).toBe(200)
  })

  it("keeps promotions reaching every agent after kill -9 of the master carrying the agents' control channels", async () => {
    // The agents subscribe on the first of the masters by address (ClusterTracking): the one to crash.
    const onCluster = track(new Cluster(control.nodes))
    await onCluster.ping()
    const masters = onCluster
      .nodes('master')
      .map((node) => `${node.options.host}:${node.options.port}`)
      .sort()
    const carrier = control.servers.find((server) => `${server.host}:${server.port}` === masters[0])
    expect(carrier).toBeDefined()
    await carrier?.crash()
    const crashedAt = Date.now()

    // The aggregator writes the registry through its Cluster client, which finds the promoted replica; the agents'
    // control channels move to a live master. A REST promotion retried until the control plane answers again.
    const key = 'page:after-crash'
    for (;;) {
      const response = await promoteByRest(fleet.base, key).catch(() => undefined)
      if (response?.status === 201) break
      if (Date.now() - crashedAt > 20_000) throw new Error(`promotion not accepted: ${response?.status}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    for (const mitigation of fleet.everyAgent()) {
      await until('the promotion after the crash', () => mitigation(key) === 'local_cache', 20_000)
    }
    console.log(
      'control Cluster master crash',
      JSON.stringify({ promotedOnEveryAgentMs: Date.now() - crashedAt }),
    )
  }, 60_000)
})
