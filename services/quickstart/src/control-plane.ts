import {
  type Aggregator,
  createAggregator,
  createPgliteDatabase,
  type Database,
  IN_MEMORY,
  loadConfig,
} from '@heatsink/aggregator'
import { startOnPreferredPort } from './preferred-port.js'
import { QUICKSTART_HOT_RPS } from './scenario.js'

/** The quickstart's two aggregator replicas. */
export interface ControlPlane {
  replicas: Aggregator[]
  urls: string[]
  /** One line per replica that could not have its usual port (8080, 8081), naming the address it took. */
  portNotes: string[]
  /** Where the registry lives, for the header. */
  database: string
  stop(): Promise<void>
}

/**
 * Starts two aggregator replicas sharing the report streams. With DATABASE_URL they use that Postgres; without it
 * they share one embedded, in-memory PGlite, which is why both run in this process (PGlite serves one process).
 */
export async function startControlPlane(
  redisUrl: string,
  namespace: string,
  cluster: boolean,
): Promise<ControlPlane> {
  const databaseUrl = process.env.DATABASE_URL
  const db: Database | undefined = databaseUrl ? undefined : createPgliteDatabase(IN_MEMORY)
  const replicas: Aggregator[] = []
  const portNotes: string[] = []
  // A start that fails has already stopped what it opened, so falling back only needs a new replica.
  const startReplica = async (i: number, port: number) => {
    const config = loadConfig({
      REDIS_URL: redisUrl,
      DATABASE_URL: databaseUrl ?? '',
      HEATSINK_NAMESPACE: namespace,
      HEATSINK_HOT_RPS: String(QUICKSTART_HOT_RPS),
      HEATSINK_COOL_SECONDS: '15',
      HEATSINK_SPLIT_WRITE_CAPACITY: '1000',
      HEATSINK_REPLICA_ID: `quickstart-replica-${i + 1}`,
      PORT: String(port),
      // On a Cluster the window counts spread over the masters instead of heating one.
      ...(cluster ? { HEATSINK_REDIS_CLUSTER: 'true', HEATSINK_COUNTER_SHARDS: '16' } : {}),
    })
    const replica = createAggregator(config, db === undefined ? {} : { db })
    await replica.start()
    return replica
  }
  for (let i = 0; i < 2; i++) {
    const preferred = 8080 + i
    const { value: replica, fellBack } = await startOnPreferredPort(preferred, (port) =>
      startReplica(i, port),
    )
    replicas.push(replica)
    if (fellBack) portNotes.push(`port ${preferred} is taken; replica ${i + 1} listens on ${replica.url()}`)
  }
  return {
    replicas,
    urls: replicas.map((replica) => replica.url() ?? ''),
    portNotes,
    database: databaseUrl ? 'Postgres at DATABASE_URL' : 'embedded PGlite (in memory)',
    stop: async () => {
      for (const replica of replicas) await replica.stop()
      await db?.close()
    },
  }
}
