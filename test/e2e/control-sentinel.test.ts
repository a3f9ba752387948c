import {
  ensureRedis,
  freePort,
  type RedisSentinel,
  type RunningService,
  startRedisSentinel,
} from '@heatsink/devservices'
import { testNamespace, useTestPostgres } from '@heatsink/test'
import { Redis, type RedisOptions } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ControlFleet, startControlFleet } from './support/control-fleet.js'
import { promoteByRest, until } from './support/in-process.js'

const postgres = useTestPostgres({ scope: 'all' })

const BEFORE_KEY = 'page:before'
const AFTER_KEY = 'page:after'
const HOT_KEY = 'page:hot-after'

// The application's data on one private Redis (D); Heatsink's control Redis on a private Sentinel deployment (a
// primary, a replica, 3 sentinels), named to every component by one redis+sentinel:// URL (the drop-in's
// `control` included).
describe('a control Redis on Sentinel (HEATSINK_CONTROL_REDIS_URL=redis+sentinel://...) through a failover', () => {
  const namespace = testNamespace()
  let data: RunningService
  let control: RedisSentinel
  let fleet: ControlFleet
  const clients: Redis[] = []

  const client = (target: string | RedisOptions) => {
    const opened =
      typeof target === 'string'
        ? new Redis(target, { maxRetriesPerRequest: 1 })
        : new Redis({ maxRetriesPerRequest: 1, ...target })
    opened.on('error', () => {})
    clients.push(opened)
    return opened
  }

  beforeAll(async () => {
    data = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
    control = await startRedisSentinel({ replicas: 1 })
    const hosts = control.sentinels.map(({ host, port }) => `${host}:${port}`).join(',')
    fleet = await startControlFleet({
      name: 'sentinel-control',
      namespace,
      dataUrl: data.url,
      databaseUrl: postgres().url,
      control: { url: `redis+sentinel://${hosts}/${control.masterName}` },
    })
  }, 60_000)

  afterAll(async () => {
    await fleet?.stop()
    for (const opened of clients) opened.disconnect()
    await data?.stop()
    await control?.stop()
  })

  it('keeps promotions reaching every agent and ingest detecting hot keys after SENTINEL FAILOVER of the control Redis', async () => {
    const primaryBefore = await control.primary()
    expect((await promoteByRest(fleet.base, BEFORE_KEY)).status).toBe(201)
    for (const mitigation of fleet.everyAgent()) {
      await until('the promotion before the failover', () => mitigation(BEFORE_KEY) === 'local_cache')
    }

    // The switch, as the first sentinel to announce it tells it.
    const listeners = control.sentinels.map((address) => client({ ...address }))
    await Promise.all(listeners.map((listener) => listener.subscribe('+switch-master')))
    const announced = new Promise<number>((resolve) => {
      for (const listener of listeners) listener.on('message', () => resolve(Date.now()))
    })
    await client({ ...control.sentinels[0] }).call('SENTINEL', 'FAILOVER', control.masterName)
    const switchedAt = await announced
    const primaryAfter = await control.primary()
    expect(primaryAfter.port).not.toBe(primaryBefore.port)

    // A promotion made after the switch is written to the new primary and must reach both agents.
    const promotedAt = Date.now()
    expect((await promoteByRest(fleet.base, AFTER_KEY)).status).toBe(201)
    for (const mitigation of fleet.everyAgent()) {
      await until('the promotion after the failover', () => mitigation(AFTER_KEY) === 'local_cache', 10_000)
    }
    const promotionMs = Date.now() - promotedAt
    // Both agents keep the key promoted before the switch (their registry reload on the new primary has it).
    for (const mitigation of fleet.everyAgent()) expect(mitigation(BEFORE_KEY)).toBe('local_cache')

    // Ingest continues: the agents' reports go to the new primary, and a key read hot now is detected.
    await client(data.url).set(HOT_KEY, 'v')
    const through = client(`redis://127.0.0.1:${fleet.proxyPort}`)
    const readingFrom = Date.now()
    while (fleet.dropIn.heatsink.mitigation(HOT_KEY) !== 'local_cache') {
      if (Date.now() - readingFrom > 15_000)
        throw new Error(`${HOT_KEY} not detected within 15 s of reading it`)
      await Promise.all([
        ...Array.from({ length: 25 }, () => through.get(HOT_KEY)),
        ...Array.from({ length: 25 }, () => fleet.dropIn.get(HOT_KEY)),
      ])
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const detectionMs = Date.now() - readingFrom
    await until('the detection on the proxy', () => fleet.proxy.agent.mitigation(HOT_KEY) === 'local_cache')
    const ready = await fetch(`${fleet.base}/readyz`)
    console.log(
      'control Sentinel failover',
      JSON.stringify({ promotionMs, detectionMs, secondsFromSwitch: (Date.now() - switchedAt) / 1000 }),
    )
    expect(ready.status).toBe(200)
    // The new primary carries the control state: the aggregator's registry snapshot and the agents' reports.
    const onNew = client({ ...primaryAfter })
    expect(await onNew.call('ROLE').then((role) => (role as string[])[0])).toBe('master')
    expect(await onNew.exists(`${namespace}:agents`)).toBe(1)
  }, 60_000)
})
