import { type RedisSentinel, startRedisSentinel } from '@heatsink/devservices'
import { createNames, decodeRegistryEvent } from '@heatsink/protocol'
import { useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { loadConfig } from '../src/config.js'
import { silent, until } from './support/fixtures.js'
import { readiness } from './support/prometheus.js'
import { makeReport, sendReport } from './support/reports.js'

// An aggregator on a Sentinel deployment (a primary, a replica, three sentinels) through two switches: a
// SENTINEL FAILOVER, then kill -9 of the primary it chose. After each, without a restart, a key reported at 5x the
// threshold is promoted and a REST promotion reaches a subscriber on the new primary.

const HOT_RPS = 100
const NAMESPACE = `hs-sentinel-agg-${Math.random().toString(36).slice(2, 8)}`
const names = createNames(NAMESPACE)
const postgres = useTestPostgres()
let deployment: RedisSentinel
let url: string
const clients: Redis[] = []

beforeAll(async () => {
  deployment = await startRedisSentinel({ replicas: 1, sentinels: 3, downAfterMs: 1000 })
  const hosts = deployment.sentinels.map((s) => `${s.host}:${s.port}`).join(',')
  url = `redis+sentinel://${hosts}/${deployment.masterName}`
})

afterAll(async () => {
  for (const client of clients) client.disconnect()
  await deployment?.stop()
})

/**
 * An ioredis Sentinel client, as an agent would hold, that leaves the old primary on +switch-master: after
 * SENTINEL FAILOVER the demoted primary keeps taking writes (and holds its subscribers) until Sentinel
 * reconfigures it, seconds later.
 */
function sentinelClient(): Redis {
  const client = new Redis({
    sentinels: deployment.sentinels,
    name: deployment.masterName,
    failoverDetector: true,
  })
  client.on('error', () => {})
  clients.push(client)
  return client
}

async function hotKeys(aggregator: Aggregator): Promise<string[]> {
  const reply = await aggregator.app.inject({ url: '/hotkeys' })
  return reply.json().hotkeys.map((entry: { key: string }) => entry.key)
}

/**
 * Reports `key` at 5x the threshold every window, as an agent does (a report the demoted primary took in its last
 * moments is lost with it), and resolves with how long the promotion took from the first report.
 */
async function detect(aggregator: Aggregator, writer: Redis, key: string): Promise<number> {
  const sentAt = Date.now()
  let lastWindow = 0
  await until(
    `${key} promoted`,
    async () => {
      const window = Math.floor(Date.now() / 1000) * 1000
      if (window !== lastWindow) {
        lastWindow = window
        await sendReport(writer, names, makeReport('agent-sentinel', window, { [key]: 5 * HOT_RPS }))
      }
      return (await hotKeys(aggregator)).includes(key)
    },
    5000,
  )
  return Date.now() - sentAt
}

/** POSTs a promotion and resolves once a subscriber on the current primary has heard it. */
async function promoteHeard(aggregator: Aggregator, heard: string[], key: string): Promise<void> {
  const reply = await aggregator.app.inject({
    method: 'POST',
    url: `/hotkeys/${encodeURIComponent(key)}/promote`,
    payload: { mitigation: 'local_cache', ttlSeconds: 60 },
  })
  expect(reply.statusCode).toBe(201)
  await until(`${key} heard on the registry channel`, async () => heard.includes(key), 5000)
}

async function switchedFrom(old: { port: number }): Promise<number> {
  const startedAt = Date.now()
  await until(
    'Sentinel names a new primary',
    async () => (await deployment.primary()).port !== old.port,
    20_000,
  )
  return Date.now() - startedAt
}

describe('an aggregator on redis+sentinel://', () => {
  it('follows SENTINEL FAILOVER and a crash of the primary: ready again, detecting and publishing, no restart', async () => {
    const aggregator = createAggregator(
      loadConfig({
        REDIS_URL: url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: NAMESPACE,
        HEATSINK_HOT_RPS: String(HOT_RPS),
        HEATSINK_WINDOW_MS: '1000',
        PORT: '0',
      }),
      { log: silent },
    )
    await aggregator.start()
    try {
      const writer = sentinelClient()
      const subscriber = sentinelClient()
      const heard: string[] = []
      subscriber.on('message', (_channel, message: string) => {
        const event = decodeRegistryEvent(message)
        if (event.type === 'promote') heard.push(event.entry.key)
      })
      await subscriber.subscribe(names.registryChannel)
      expect((await readiness(aggregator)).statusCode).toBe(200)
      await detect(aggregator, writer, 'before:switch')

      // A planned switch: the old primary is demoted, its clients killed.
      const first = await deployment.primary()
      const admin = new Redis(deployment.sentinels[0] as { host: string; port: number })
      clients.push(admin)
      await admin.call('SENTINEL', 'FAILOVER', deployment.masterName)
      const failoverMs = await switchedFrom(first)
      await until(
        '/readyz 200 on the new primary',
        async () => (await readiness(aggregator)).statusCode === 200,
      )
      const detectAfterFailover = await detect(aggregator, writer, 'after:failover')
      await promoteHeard(aggregator, heard, 'promoted:after:failover')

      // An unplanned switch: kill -9 of the primary Sentinel chose. /readyz says so until a primary is back.
      const second = await deployment.primary()
      const victim = deployment.servers.find((server) => server.port === second.port)
      await victim?.crash()
      const crashedAt = Date.now()
      // The 503 answer itself is kept: asked again, /readyz may already be 200 on the promoted replica.
      let unready: Awaited<ReturnType<typeof readiness>> | undefined
      await until('/readyz 503 without a primary', async () => {
        const answer = await readiness(aggregator)
        if (answer.statusCode === 503) unready = answer
        return unready !== undefined
      })
      const crashSwitchMs = await switchedFrom(second)
      await until(
        '/readyz 200 on the new primary',
        async () => (await readiness(aggregator)).statusCode === 200,
      )
      const readyAfterCrashMs = Date.now() - crashedAt
      const detectAfterCrash = await detect(aggregator, writer, 'after:crash')
      await promoteHeard(aggregator, heard, 'promoted:after:crash')

      console.log(
        JSON.stringify({
          failoverMs,
          detectAfterFailover,
          crashSwitchMs,
          readyAfterCrashMs,
          detectAfterCrash,
          unreadyWhileDown: unready?.checks.redis,
        }),
      )
      expect(unready?.statusCode).toBe(503)
      // Detection is within a couple of windows of the report, as on a single Redis.
      expect(detectAfterFailover).toBeLessThan(3000)
      expect(detectAfterCrash).toBeLessThan(3000)
    } finally {
      await aggregator.stop()
    }
  }, 28_000)
})
