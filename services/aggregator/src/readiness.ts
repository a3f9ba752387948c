import type { Cluster, Redis } from 'ioredis'
import type { Database } from './db/database.js'
import { pendingMigrations } from './db/migrate.js'
import type { ReadinessProbe } from './http/ops-routes.js'
import { checkPrimary } from './redis-connection.js'

/** What a replica's readiness depends on. */
export interface ReplicaProbesOptions {
  readonly redis: Redis | Cluster
  readonly db: Database
  readonly migrationsDir: string
  /** Throws while ingest cannot read the report streams (DetectionEngine.checkIngest). */
  readonly ingest: () => void
}

/** The checks /readyz runs on one replica: Redis a writable primary, Postgres up and migrated, ingest reading. */
export function replicaProbes(options: ReplicaProbesOptions): ReadinessProbe[] {
  const { redis, db, migrationsDir } = options
  return [
    { name: 'redis', check: () => checkPrimary(redis) },
    { name: 'postgres', check: async () => void (await db.query('SELECT 1')) },
    {
      name: 'migrations',
      check: async () => {
        const pending = await pendingMigrations(db, migrationsDir)
        if (pending.length > 0) throw new Error(`not applied: ${pending.join(', ')}`)
      },
    },
    // A Redis that answers PING can still leave ingest stuck (a group gone and not recreatable, a stream key of
    // the wrong type): this check fails then, so the replica does not claim to detect while it cannot.
    { name: 'ingest', check: async () => options.ingest() },
  ]
}
