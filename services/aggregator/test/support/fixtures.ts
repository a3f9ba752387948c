import { createTestPostgres, testSchemaName } from '@heatsink/test'
import type { Redis } from 'ioredis'
import { pino } from 'pino'
import { afterAll } from 'vitest'
import type { Clock } from '../../src/clock.js'
import { type Config, loadConfig } from '../../src/config.js'
import type { Database } from '../../src/db/database.js'
import { migrate } from '../../src/db/migrate.js'
import { createPgDatabase, type PgDatabaseOptions } from '../../src/db/pg-database.js'
import { createPgliteDatabase, IN_MEMORY } from '../../src/db/pglite-database.js'

/** A logger that prints nothing. */
export const silent = pino({ level: 'silent' })

/** A clock that moves only when told. */
export class ManualClock implements Clock {
  time: number

  constructor(start = 1_700_000_000_000) {
    this.time = start
  }

  now(): number {
    return this.time
  }

  advance(ms: number): void {
    this.time += ms
  }
}

/** A migrated registry database and how to dispose of it. */
export interface TestDatabase {
  readonly db: Database
  cleanup(): Promise<void>
}

/** A Database on a fresh schema of the test Postgres, migrated. */
export async function openPostgres(options: PgDatabaseOptions = {}): Promise<TestDatabase & { url: string }> {
  const postgres = await createTestPostgres()
  const db = createPgDatabase(postgres.url, options)
  await migrate(db)
  return {
    db,
    url: postgres.url,
    cleanup: async () => {
      await db.close()
      await postgres.cleanup()
    },
  }
}

let sharedPglite: Database | undefined

/**
 * A Database on a fresh schema of one in-memory PGlite shared by the file's tests (PGlite takes seconds to
 * start), migrated. Tests run one at a time within a file, so the schema on the search path is this test's.
 */
export async function openPglite(): Promise<TestDatabase> {
  if (sharedPglite === undefined) {
    const created = createPgliteDatabase(IN_MEMORY)
    sharedPglite = created
    afterAll(() => created.close())
  }
  const db = sharedPglite
  const schema = testSchemaName()
  await db.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`)
  await migrate(db)
  return {
    // The shared instance outlives the test, so closing is the file's business, not the test's.
    db: { ...db, close: async () => {} },
    cleanup: async () => void (await db.query(`DROP SCHEMA ${schema} CASCADE; SET search_path TO public`)),
  }
}

/** Both Database implementations, for suites every implementation must pass. */
export const databaseImplementations = [
  { name: 'postgres', open: () => openPostgres() },
  { name: 'pglite', open: openPglite },
] as const

/** A configuration from the test services plus `env`. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    REDIS_URL: process.env.REDIS_URL,
    DATABASE_URL: process.env.DATABASE_URL,
    PORT: '0',
    HEATSINK_REPLICA_ID: 'test',
    ...env,
  })
}

/** Subscribes to `channel` and records every message, in order. */
export async function recordChannel(subscriber: Redis, channel: string): Promise<string[]> {
  const messages: string[] = []
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) messages.push(message)
  })
  await subscriber.subscribe(channel)
  return messages
}

/** Resolves once `condition` holds, polling; fails after `timeoutMs` with `what` in the message. */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
