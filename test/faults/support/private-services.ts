import { createTestPostgres, createTestRedis, type TestPostgres, type TestRedis } from '@heatsink/test'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { AggregatorProcess } from './aggregator-process.js'
import { RestartableRedis } from './restartable-redis.js'
import { StoppablePostgres } from './stoppable-postgres.js'

/** One test's view of the file's private servers, and the replicas it started on them. */
export interface FaultWorld {
  readonly server: { redis: RestartableRedis; postgres: StoppablePostgres }
  /** A fresh namespace on the private Redis, with clients closed after the test. */
  readonly redis: TestRedis
  /** A fresh schema in the private Postgres. */
  readonly postgres: TestPostgres
  /** Starts an aggregator process on this test's namespace and schema; killed after the test. */
  startReplica(env?: Record<string, string>): Promise<AggregatorProcess>
}

/**
 * A private redis-server and a private Postgres for the calling file (the faults crash, flush and stop them, so
 * they are never the shared servers), and per test a namespace, a schema and the replicas it starts.
 */
export function usePrivateServices(): () => FaultWorld {
  let server: FaultWorld['server'] | undefined
  let world: FaultWorld | undefined
  const replicas: AggregatorProcess[] = []

  beforeAll(async () => {
    const [redis, postgres] = await Promise.all([RestartableRedis.start(), StoppablePostgres.start()])
    server = { redis, postgres }
  }, 60_000)
  afterAll(async () => {
    await Promise.all([server?.redis.stop(), server?.postgres.stop()])
  })

  beforeEach(async () => {
    if (server === undefined) throw new Error('private servers did not start')
    const redis = createTestRedis({ url: server.redis.url })
    const postgres = await createTestPostgres({ url: server.postgres.url })
    let started = 0
    world = {
      server,
      redis,
      postgres,
      async startReplica(env = {}) {
        started += 1
        const replica = await AggregatorProcess.start(
          { redisUrl: redis.url, databaseUrl: postgres.url, namespace: redis.namespace },
          { HEATSINK_REPLICA_ID: `replica-${started}`, ...env },
        )
        replicas.push(replica)
        return replica
      },
    }
  })
  afterEach(async () => {
    for (const replica of replicas.splice(0)) {
      replica.kill()
      await replica.exited
    }
    await server?.postgres.ensureRunning()
    await world?.redis.cleanup()
    await world?.postgres.cleanup()
    world = undefined
  })

  return () => {
    if (world === undefined) throw new Error('usePrivateServices(): only inside tests')
    return world
  }
}
