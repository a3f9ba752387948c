import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { createNames, type HeatsinkNames } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, beforeEach, describe } from 'vitest'
// The fixtures straight from their modules: @heatsink/test's index also loads pg, whose CommonJS require of
// pg-pool intermittently returns an ES module namespace in vitest workers ("Class extends value [object
// Module]"), failing suites that never touch Postgres.
import { testNamespace } from '../../../../test/support/namespace.js'
import { createTestRedis, type TestRedis } from '../../../../test/support/redis.js'
import { createSplitter, type Splitter, type SplitterOptions } from '../../src/index.js'
import { connectCluster } from './cluster.js'

/** Where a contract test runs: the shared standalone Redis, or a private 3-master Redis Cluster. */
export interface SplitTarget {
  readonly kind: 'redis' | 'cluster'
  /** This test's namespace: every base key a test uses starts with it, so cleanup finds it. */
  readonly namespace: string
  readonly names: HeatsinkNames
  /** A new client with its own connection(s), closed after the test. */
  client(): Promise<Redis | Cluster>
  /** A splitter ("an agent") on a new client of its own. */
  splitter(agentId: string, options?: Partial<SplitterOptions>): Promise<Splitter>
  /** One splitter per id, each on its own client. */
  splitters<const T extends readonly string[]>(ids: T): Promise<{ -readonly [K in keyof T]: Splitter }>
}

/**
 * Runs `suite` once against the standalone test Redis and once against a Redis Cluster of three masters that
 * the file starts (and stops in afterAll), or only against the `kinds` given. Each test gets a fresh namespace
 * and fresh clients.
 */
export function describeTargets(
  title: string,
  suite: (target: () => SplitTarget) => void,
  kinds: ReadonlyArray<SplitTarget['kind']> = ['redis', 'cluster'],
): void {
  describe.each(kinds)(`${title} (%s)`, (kind) => {
    let servers: RedisCluster | undefined
    let redis: TestRedis | undefined
    let current: SplitTarget | undefined
    const clients: Array<Redis | Cluster> = []

    if (kind === 'cluster') {
      beforeAll(async () => {
        servers = await startRedisCluster({ masters: 3 })
      }, 60_000)
      afterAll(async () => {
        await servers?.stop()
      })
    }

    beforeEach(async () => {
      const namespace = testNamespace()
      redis = kind === 'redis' ? createTestRedis({ namespace }) : undefined
      const connect = async (): Promise<Redis | Cluster> => {
        if (redis !== undefined) return redis.client()
        return connectCluster(servers!.nodes, clients)
      }
      const names = createNames(namespace)
      current = {
        kind,
        namespace,
        names,
        client: connect,
        async splitter(agentId, options = {}) {
          return createSplitter({ redis: await connect(), names, agentId, ...options })
        },
        splitters(ids) {
          return Promise.all(ids.map((id) => this.splitter(`agent-${id}`))) as never
        },
      }
    })

    afterEach(async () => {
      for (const client of clients.splice(0)) client.disconnect()
      await redis?.cleanup()
      redis = undefined
      current = undefined
    })

    suite(() => {
      if (current === undefined) throw new Error('the target exists only inside tests')
      return current
    })
  })
}
