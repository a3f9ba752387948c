import { readdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { runner } from 'node-pg-migrate'
import type { ClientBase } from 'pg'
import type { Logger } from 'pino'
import { MigrationError } from '../errors.js'
import type { Database, Queryable } from './database.js'

/**
 * The migrations shipped inside this package: dist/migrations/ in the build (the build copies them there, so an
 * installed or deployed package carries its own), src/migrations/ in the source tree (a link to the repository's
 * top-level migrations/, which stays the one place they are written).
 */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url))

/** Where node-pg-migrate records which migrations ran, in the connection's current schema. */
export const MIGRATIONS_TABLE = 'schema_migrations'

// 'HEATSK' in ASCII: our own advisory lock rather than node-pg-migrate's shared default, so replicas wait for
// each other but not for an unrelated application migrating the same database.
const MIGRATION_LOCK_ID = 0x484541545348

/** Options of migrate. */
export interface MigrateOptions {
  /** Default: MIGRATIONS_DIR. */
  readonly dir?: string
  readonly log?: Logger
}

/**
 * Applies the pending SQL migrations with node-pg-migrate, under an advisory lock so replicas starting together
 * take turns (the later ones find nothing to do), all pending files in one transaction. Tables go into the
 * connection's current schema (the first existing one on its search_path). Returns the names applied.
 */
export async function migrate(db: Database, options: MigrateOptions = {}): Promise<string[]> {
  const dir = options.dir ?? MIGRATIONS_DIR
  const log = options.log
  try {
    return await db.session(async (session) => {
      const schema = await currentSchema(session)
      const applied = await runner({
        dbClient: asPgClient(session),
        dir,
        // Only .sql files are migrations; anything else there (a README) is not loaded as code.
        ignorePattern: '(\\..*|.*(?<!\\.sql))',
        migrationsTable: MIGRATIONS_TABLE,
        migrationsSchema: schema,
        direction: 'up',
        checkOrder: true,
        singleTransaction: true,
        advisoryLockMode: 'wait',
        lockValue: MIGRATION_LOCK_ID,
        // Its per-file chatter goes to debug; what was applied is logged once below.
        logger: {
          debug: (msg) => log?.debug(msg),
          info: (msg) => log?.debug(msg),
          warn: (msg) => log?.warn(msg),
          error: (msg) => log?.error(msg),
        },
      })
      const names = applied.map((migration) => migration.name)
      if (names.length > 0) log?.info({ applied: names, schema }, 'migrations applied')
      return names
    })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new MigrationError(`applying the migrations in ${dir} failed: ${reason}`, { cause: error })
  }
}

/** Names of the migration files in `dir` that the database has not applied yet, in order. */
export async function pendingMigrations(db: Queryable, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir))
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => name.slice(0, -'.sql'.length))
  const { rows } = await db.query<{ present: boolean }>(
    `SELECT to_regclass('${MIGRATIONS_TABLE}') IS NOT NULL AS present`,
  )
  if (rows[0]?.present !== true) return files
  const applied = await db.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`)
  const done = new Set(applied.rows.map((row) => row.name))
  return files.filter((name) => !done.has(name))
}

async function currentSchema(session: Queryable): Promise<string> {
  const { rows } = await session.query<{ schema: string | null }>('SELECT current_schema() AS schema')
  const schema = rows[0]?.schema
  if (!schema) throw new Error('no schema to migrate into: no schema on the search_path exists')
  return schema
}

// node-pg-migrate drives an external client only through query(text, values), which Queryable provides with
// node-postgres's semantics (several statements allowed without values), for pg and PGlite alike.
function asPgClient(session: Queryable): ClientBase {
  const client = {
    query: (textOrConfig: string | { text: string; values?: unknown[] }, values?: unknown[]) =>
      typeof textOrConfig === 'string'
        ? session.query(textOrConfig, values)
        : session.query(textOrConfig.text, textOrConfig.values ?? values),
  }
  return client as unknown as ClientBase
}
