import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, type StartedRedisProcess, startRedisProcess } from '@heatsink/devservices'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Aggregator } from '../src/aggregator.js'
import { until } from './support/fixtures.js'
import { nodeSamplingAggregator, nodesOf } from './support/node-view.js'

const control = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })

// Heatsink's state on a control Redis, the application's Redis apart: when the application's Redis goes down the
// node view says so (up: false, heatsink_node_up 0) instead of going blank, and it comes back by itself.
describe('the node view while the application Redis is down', () => {
  const dir = mkdtempSync(join(tmpdir(), 'heatsink-node-outage-'))
  let port: number
  let data: StartedRedisProcess
  let aggregator: Aggregator

  const start = () =>
    startRedisProcess({
      binary: 'redis-server',
      dir,
      service: 'redis',
      timeoutMs: 10_000,
      pickPort: async () => port,
    })

  beforeAll(async () => {
    port = await freePort()
    data = await start()
    aggregator = await nodeSamplingAggregator(postgres().url, {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      HEATSINK_CONTROL_REDIS_URL: control().url,
      HEATSINK_NODE_SAMPLE_MS: '200',
    })
  }, 60_000)

  afterAll(async () => {
    await aggregator?.stop()
    await data?.process.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  const node = async () => {
    return (await nodesOf(aggregator)).nodes.find((candidate) => candidate.node === `127.0.0.1:${port}`)
  }
  const upMetric = async () =>
    new RegExp(`^heatsink_node_up\\{node="127\\.0\\.0\\.1:${port}"\\} (\\d)$`, 'm').exec(
      (await aggregator.app.inject({ url: '/metrics' })).body,
    )?.[1]

  it('samples the application Redis, shows it down while it is, and up again once it is back', async () => {
    await until('the node sampled', async () => (await node())?.figures?.opsPerSecond != null, 10_000)
    expect(await upMetric()).toBe('1')

    await data.process.stop()
    await until('the node shown down', async () => (await node())?.up === false, 10_000)
    const down = await node()
    expect(down?.error).toMatch(/ECONNREFUSED|Connection is closed|Stream isn't writeable|connect/i)
    // What it last gave stays for its page.
    expect(down?.figures?.usedMemoryBytes).toBeGreaterThan(0)
    expect(await upMetric()).toBe('0')

    data = await start()
    await until('the node up again', async () => (await node())?.up === true, 15_000)
    expect(await upMetric()).toBe('1')
  }, 60_000)
})
