import { Redis } from '@heatsink/agent'
import { type RedisSentinel, startRedisSentinel } from '@heatsink/devservices'
import { Redis as PlainRedis, type RedisOptions } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import {
  failoverUnderTraffic,
  type ScenarioClients,
  STALE_BOUND_MS,
  scenarioClients,
} from './support/failover-scenario.js'

let deployment: RedisSentinel | undefined
afterEach(async () => {
  await deployment?.stop()
  deployment = undefined
})

function clientsOn(sentinel: RedisSentinel, extra: RedisOptions = {}) {
  return (key: string, namespace: string): ScenarioClients => {
    // What an application gives ioredis, for the reference clients and Heatsink's alike.
    const options: RedisOptions = { sentinels: sentinel.sentinels, name: sentinel.masterName, ...extra }
    const writer = new PlainRedis(options)
    const plain = new PlainRedis(options)
    const heatsink = new Redis({ ...options, heatsink: { namespace } })
    // A second plain reader, measured against the first as Heatsink's reads are: what ioredis alone shows.
    return scenarioClients(key, writer, plain, heatsink, new PlainRedis(options))
  }
}

/** Resolves with the moment (performance.now()) the first sentinel announces `+switch-master`. */
async function switchAnnounced(sentinel: RedisSentinel): Promise<() => Promise<number>> {
  const listeners = sentinel.sentinels.map((address) => new PlainRedis({ ...address, lazyConnect: true }))
  await Promise.all(listeners.map((listener) => listener.connect()))
  await Promise.all(listeners.map((listener) => listener.subscribe('+switch-master')))
  const announced = new Promise<number>((resolve) => {
    for (const listener of listeners) listener.on('message', () => resolve(performance.now()))
  })
  return async () => {
    const at = await announced
    for (const listener of listeners) listener.disconnect()
    return at
  }
}

describe('the drop-in through a Sentinel failover, beside a plain ioredis reader', () => {
  it('SENTINEL FAILOVER: no read staler than without a failover, L1 back within 1 s, a later promotion arrives', async () => {
    deployment = await startRedisSentinel({ replicas: 1 })
    const sentinel = deployment
    // failoverDetector, as ioredis advises, so that every client leaves the old primary on +switch-master.
    const options = { failoverDetector: true }
    const figures = await failoverUnderTraffic(clientsOn(sentinel, options), async () => {
      const switched = await switchAnnounced(sentinel)
      const admin = new PlainRedis({ ...sentinel.sentinels[0] })
      await admin.call('SENTINEL', 'FAILOVER', sentinel.masterName)
      admin.disconnect()
      return switched()
    })
    console.log('SENTINEL FAILOVER', JSON.stringify(figures))
    // Every read, from L1 or not, is as fresh as a plain ioredis reader's: L1's are at most one tracking message
    // behind, the others go to the server a plain client's would.
    expect(figures.maxStaleMsAfterSwitch).toBeLessThan(STALE_BOUND_MS)
    expect(figures.maxStaleMsFromL1AfterSwitch).toBeLessThan(STALE_BOUND_MS)
    expect(figures.l1BackMs).toBeLessThan(1000)
  }, 30_000)

  it('kill -9 of the primary: no read staler than without a failover, L1 back within 1 s, a later promotion arrives', async () => {
    deployment = await startRedisSentinel({ replicas: 1 })
    const sentinel = deployment
    const figures = await failoverUnderTraffic(clientsOn(sentinel), async () => {
      const switched = await switchAnnounced(sentinel)
      const primary = await sentinel.primary()
      await sentinel.servers.find((server) => server.port === primary.port)?.crash()
      return switched()
    })
    console.log('kill -9 of the Sentinel primary', JSON.stringify(figures))
    expect(figures.maxStaleMsAfterSwitch).toBeLessThan(STALE_BOUND_MS)
    expect(figures.maxStaleMsFromL1AfterSwitch).toBeLessThan(STALE_BOUND_MS)
    expect(figures.l1BackMs).toBeLessThan(1000)
  }, 30_000)
})
