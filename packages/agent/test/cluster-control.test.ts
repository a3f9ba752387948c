import { ensureRedis, freePort, type RunningService } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { testNamespace } from '@heatsink/test'
import { Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { type Agent, createAgent } from '../src/index.js'
import { publishRegistry } from '../src/testing.js'
import { useRedisCluster, waitFor } from './support/helpers.js'

const servers = useRedisCluster()
let control: RunningService | undefined
const clients: Array<Redis | Cluster> = []
const agents: Agent[] = []

beforeAll(async () => {
  control = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
}, 60_000)

afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()))
  for (const client of clients.splice(0)) client.disconnect()
})

afterAll(async () => {
  await control?.stop()
})

function track<T extends Redis | Cluster>(client: T): T {
  client.on('error', () => {})
  clients.push(client)
  return client
}

it('on a Cluster with a standalone control Redis: L1 and tracking on the masters, every other state on the control Redis', async () => {
  const namespace = testNamespace()
  const names = createNames(namespace)
  const key = `${namespace}:hot`
  const masters = servers().nodes.map(({ host, port }) => track(new Redis({ host, port })))
  const heardOnMasters: string[] = []
  for (const master of masters) {
    const listener = track(master.duplicate())
    listener.on('pmessage', (_pattern: string, channel: string) => heardOnMasters.push(channel))
    await listener.psubscribe('*')
  }
  const data = track(new Cluster(servers().nodes))
  await new Promise<void>((resolve) => data.once('ready', resolve))
  const onControl = track(new Redis((control as RunningService).url))
  const agent = createAgent({
    redis: data,
    control: (control as RunningService).url,
    namespace,
    agentId: 'cluster-control',
    l1: { maxTtlMs: 60_000 },
  })
  agents.push(agent)
  await agent.ready()
  await data.set(key, 'v1')

  await publishRegistry(onControl, names, { key })
  await waitFor(() => agent.mitigation(key) === 'local_cache', 'the promotion from the control Redis')
  await waitFor(() => agent.stats().l1Entries === 1, 'L1 filled from the key master')
  const hits = agent.stats().l1Hits
  expect(await agent.get(key)).toBe('v1')
  expect(agent.stats().l1Hits).toBe(hits + 1)

  // A write on the Cluster reaches L1 through the master's tracking; one through the agent also through C.
  await data.set(key, 'v2')
  await waitFor(async () => (await agent.get(key)) === 'v2', 'the plain write', 250)
  await agent.set(key, 'v3')
  expect(await agent.get(key)).toBe('v3')

  await waitFor(
    async () => (await onControl.type(names.reportStreamFor('cluster-control'))) === 'stream',
    'a report on the control Redis',
  )
  // The masters hold the application's key and nothing of Heatsink's (a Cluster has no SWAPDB, so no marker).
  const onMasters = (await Promise.all(masters.map((master) => master.keys(`${namespace}:*`)))).flat()
  expect(onMasters).toEqual([key])
  expect(heardOnMasters.filter((channel) => channel.startsWith(`${namespace}:`))).toEqual([])
}, 30_000)
