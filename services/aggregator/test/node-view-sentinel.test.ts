import { type RedisSentinel, startRedisSentinel } from '@heatsink/devservices'
import type { NodesView } from '@heatsink/protocol'
import { useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Aggregator } from '../src/aggregator.js'
import { until } from './support/fixtures.js'
import { nodeSamplingAggregator, nodesOf } from './support/node-view.js'

const postgres = useTestPostgres({ scope: 'all' })

// A Sentinel deployment (a primary, two replicas, three sentinels): the node view lists the primary Sentinel
// names and both replicas, and after SENTINEL FAILOVER the new primary as master and the old one as its replica.
describe('the node view of a Sentinel-managed primary', () => {
  let deployment: RedisSentinel
  let aggregator: Aggregator

  beforeAll(async () => {
    deployment = await startRedisSentinel({ replicas: 2, sentinels: 3, downAfterMs: 1000 })
    const hosts = deployment.sentinels.map((s) => `${s.host}:${s.port}`).join(',')
    aggregator = await nodeSamplingAggregator(postgres().url, {
      REDIS_URL: `redis+sentinel://${hosts}/${deployment.masterName}`,
    })
  }, 60_000)

  afterAll(async () => {
    await aggregator?.stop()
    await deployment?.stop()
  })

  const view = () => nodesOf(aggregator)
  const address = (node: { host: string; port: number }) => `${node.host}:${node.port}`

  // Roles as the view shows them, by address: what the test expects the deployment to be.
  const roles = (found: NodesView) =>
    Object.fromEntries(
      found.nodes.filter((node) => node.up).map((node) => [node.node, [node.role, node.master]]),
    )

  it('lists the primary and its replicas, and follows a failover', async () => {
    const primary = address(await deployment.primary())
    const expected = (master: string) =>
      Object.fromEntries(
        deployment.servers.map((server) => {
          const node = address(server)
          return [node, node === master ? ['master', null] : ['replica', master]]
        }),
      )
    let last: NodesView | undefined
    const deadline = Date.now() + 15_000
    while (last === undefined || !sameRoles(roles(last), expected(primary))) {
      if (Date.now() > deadline) expect(roles(last as NodesView)).toEqual(expected(primary))
      await new Promise((resolve) => setTimeout(resolve, 100))
      last = await view()
    }
    expect(last?.topology).toBe('sentinel')
    expect(last?.nodes.every((node) => node.figures !== null)).toBe(true)

    const sentinel = new Redis(
      deployment.sentinels[0]?.port as number,
      deployment.sentinels[0]?.host as string,
    )
    await sentinel.call('SENTINEL', 'FAILOVER', deployment.masterName)
    sentinel.disconnect()
    await until('a new primary', async () => address(await deployment.primary()) !== primary, 20_000)
    const promoted = address(await deployment.primary())
    await until(
      'the view to follow the failover',
      async () => sameRoles(roles(await view()), expected(promoted)),
      20_000,
    )
  }, 60_000)
})

function sameRoles(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(b)
  return (
    Object.keys(a).length === keys.length &&
    keys.every((key) => JSON.stringify(a[key]) === JSON.stringify(b[key]))
  )
}
