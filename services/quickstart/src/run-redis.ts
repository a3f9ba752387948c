import {
  type RedisCluster,
  type RedisSentinel,
  ServiceUnavailableError,
  startRedisCluster,
} from '@heatsink/devservices'
import { Cluster, Redis } from 'ioredis'
import { type QuickstartRedis, quickstartClient, startQuickstartRedis } from './quickstart-redis.js'
import { markRunning, otherRunsLive, removeAbandonedRuns, removeKeys } from './run-namespace.js'
import { backgroundKey, SCENARIO } from './scenario.js'

/**
 * The Redis a run drives: the one at REDIS_URL (or a private one), with --sentinel a private Sentinel deployment,
 * with --cluster a private 3-master Cluster.
 */
export interface RunRedis {
  /** What every component is given: the server's URL, or one node of the Cluster. */
  readonly url: string
  readonly cluster: boolean
  /** Set with --sentinel: the deployment, for the live failover. */
  readonly sentinel?: RedisSentinel
  /** For the header: where it is, and whether this run started it. */
  readonly label: string
  /** Removes what the run wrote (or stops the private servers). */
  close(namespace: string): Promise<void>
}

// Keys seeded per round trip on a Cluster, where one pipeline cannot span slots.
const SEED_BATCH = 500

/**
 * Finds or starts the run's Redis and seeds the demo's keys. On a shared server the run marks its namespace live
 * and removes what interrupted runs left; a private Cluster holds nothing else, and is stopped at the end.
 */
export async function openRunRedis(
  namespace: string,
  options: { cluster: boolean; sentinel: boolean; log: (message: string) => void },
): Promise<RunRedis> {
  if (options.cluster) return openCluster()
  let service: QuickstartRedis
  try {
    service = await startQuickstartRedis(options.sentinel, options.log)
  } catch (error) {
    if (!(error instanceof ServiceUnavailableError)) throw error
    console.error(error.message)
    process.exit(1)
  }
  const redis = quickstartClient(service.url)
  // Marked first, so that a run starting meanwhile never takes this one's keys for an abandoned run's.
  const running = await markRunning(redis, namespace)
  await removeAbandonedRuns(redis)
  // The demo keys are shared by every run on this Redis: left by an interrupted run, they go only if none is live.
  if (!(await otherRunsLive(redis, namespace))) await removeKeys(redis, 'demo:*')
  await seed(redis)
  return {
    url: service.url,
    cluster: false,
    ...(service.sentinel === undefined ? {} : { sentinel: service.sentinel }),
    label: `${service.url}${service.started ? ' (private, started for this run)' : ''}`,
    close: async () => {
      await removeKeys(redis, `${namespace}:*`)
      if (!(await otherRunsLive(redis, namespace))) await removeKeys(redis, 'demo:*')
      await running.stop()
      await redis.quit()
      await service.stop()
    },
  }
}

async function openCluster(): Promise<RunRedis> {
  const servers: RedisCluster = await startRedisCluster({ masters: 3 })
  const client = new Cluster(servers.nodes)
  await seed(client)
  await client.quit()
  const [seedNode] = servers.nodes
  return {
    url: `redis://${seedNode?.host}:${seedNode?.port}`,
    cluster: true,
    label: `a private 3-master Cluster (${servers.nodes.map(({ host, port }) => `${host}:${port}`).join(', ')})`,
    close: () => servers.stop(),
  }
}

// Values for every key the traffic reads, so reads hit as in a warm cache.
async function seed(client: Redis | Cluster): Promise<void> {
  const entries: Array<[string, string]> = [
    ...Array.from({ length: SCENARIO.backgroundKeys }, (_, i): [string, string] => [
      backgroundKey(i),
      `product ${i}`,
    ]),
    [SCENARIO.viral.key, JSON.stringify({ id: 42, text: 'a post everyone reads' })],
    [SCENARIO.proxied.key, JSON.stringify({ id: 7, name: 'a celebrity' })],
  ]
  if (client instanceof Redis) {
    const pipeline = client.pipeline()
    for (const [key, value] of entries) pipeline.set(key, value, 'EX', 3600)
    await pipeline.exec()
    return
  }
  for (let i = 0; i < entries.length; i += SEED_BATCH) {
    await Promise.all(
      entries.slice(i, i + SEED_BATCH).map(([key, value]) => client.set(key, value, 'EX', 3600)),
    )
  }
}
