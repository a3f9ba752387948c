import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useTestPostgres } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import type { Database } from '../src/db/database.js'
import { MIGRATIONS_DIR, migrate, pendingMigrations } from '../src/db/migrate.js'
import { createPgDatabase } from '../src/db/pg-database.js'
import { createPgliteDatabase, IN_MEMORY } from '../src/db/pglite-database.js'
import { MigrationError } from '../src/errors.js'

const postgres = useTestPostgres()
const shipped = readdirSync(MIGRATIONS_DIR)
  .filter((name) => name.endsWith('.sql'))
  .map((name) => name.replace(/\.sql$/, ''))
  .sort()

const opened: Database[] = []
function open(url: string): Database {
  const db = createPgDatabase(url)
  opened.push(db)
  return db
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()))
})

async function tables(db: Database): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`,
  )
  return rows.map((row) => row.table_name)
}

describe('migrate', () => {
  it('lets two replicas migrating at once both succeed, applying each migration once', async () => {
    const [one, two] = [open(postgres().url), open(postgres().url)]

    const [first, second] = await Promise.all([migrate(one), migrate(two)])

    // Under the advisory lock one replica applied everything and the other found nothing left.
    expect([first, second].sort((a, b) => b.length - a.length)).toEqual([shipped, []])
    const { rows } = await one.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')
    expect(rows.map((row) => row.name)).toEqual(shipped)
    expect(await tables(one)).toEqual([
      'hot_key_events',
      'hot_key_registry',
      'registry_meta',
      'schema_migrations',
    ])
    const meta = await one.query<{ version: string }>('SELECT version FROM registry_meta')
    expect(meta.rows.map((row) => Number(row.version))).toEqual([0])
  })

  it('does nothing on a second start', async () => {
    const db = open(postgres().url)
    expect(await migrate(db)).toEqual(shipped)
    expect(await pendingMigrations(db)).toEqual([])

    expect(await migrate(db)).toEqual([])
    const meta = await db.query('SELECT * FROM registry_meta')
    expect(meta.rows).toHaveLength(1)
  })

  it('reports every migration as pending on an empty schema', async () => {
    expect(await pendingMigrations(open(postgres().url))).toEqual(shipped)
  })

  it('rolls a failing migration back entirely, says which directory failed, and releases the lock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heatsink-migrations-'))
    try {
      writeFileSync(join(dir, '0001_ok.sql'), 'CREATE TABLE fine (id int);')
      writeFileSync(
        join(dir, '0002_broken.sql'),
        'CREATE TABLE also_fine (id int);\nSELECT no_such_function();',
      )
      const db = open(postgres().url)

      const error = await migrate(db, { dir }).catch((e: unknown) => e)

      expect(error).toBeInstanceOf(MigrationError)
      expect((error as Error).message).toContain(dir)
      // Only node-pg-migrate's bookkeeping table, created before the transaction, remains, and it is empty.
      expect(await tables(db)).toEqual(['schema_migrations'])
      expect((await db.query('SELECT name FROM schema_migrations')).rows).toEqual([])
      // The advisory lock was released: the real migrations run at once.
      expect(await migrate(db)).toEqual(shipped)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('applies the same migrations to the embedded PGlite', async () => {
    const db = createPgliteDatabase(IN_MEMORY)
    try {
      expect(await migrate(db)).toEqual(shipped)
      expect(await migrate(db)).toEqual([])
      expect(await pendingMigrations(db)).toEqual([])
      expect(await tables(db)).toEqual([
        'hot_key_events',
        'hot_key_registry',
        'registry_meta',
        'schema_migrations',
      ])
    } finally {
      await db.close()
    }
  })
})
