import { mkdir } from 'node:fs/promises'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import type { Database, QueryResult } from './database.js'

/** The data directory that keeps PGlite in memory: nothing survives close(). */
export const IN_MEMORY = 'memory://'

/**
 * A Database on an embedded PGlite (Postgres compiled to WebAssembly) in `dataDir`, for running without a
 * Postgres server. It starts loading on first use, so creating one costs nothing and a failure to open the
 * data directory surfaces from the first statement (the migrations, at start). One process per directory.
 */
export function createPgliteDatabase(dataDir: string): Database {
  let opening: Promise<PGlite> | undefined
  let closed = false
  const open = (): Promise<PGlite> => {
    if (closed) return Promise.reject(new Error(`the PGlite database in ${dataDir} is closed`))
    if (opening === undefined) {
      opening = load(dataDir).catch((error: unknown) => {
        // A failed open (a locked or unreadable directory) is retried by the next statement.
        opening = undefined
        throw error
      })
    }
    return opening
  }

  return {
    kind: 'pglite',
    query: async (sql, params) => run(await open(), sql, params),
    // PGlite's transaction holds its one connection exclusively, so other queries wait instead of joining it.
    transaction: async (fn) => (await open()).transaction((tx) => fn({ query: (sql, p) => run(tx, sql, p) })),
    // One connection is all PGlite has, so the database itself is the session.
    session: async (fn) => {
      const db = await open()
      return fn({ query: (sql, params) => run(db, sql, params) })
    },
    close: async () => {
      const current = opening
      closed = true
      if (current !== undefined) await (await current).close()
    },
  }
}

async function load(dataDir: string): Promise<PGlite> {
  if (dataDir !== IN_MEMORY) await mkdir(dataDir, { recursive: true })
  return PGlite.create(dataDir)
}

// As node-postgres does: without parameters the simple protocol, which allows several statements (migrations).
async function run<T>(
  target: PGlite | Transaction,
  sql: string,
  params?: readonly unknown[],
): Promise<QueryResult<T>> {
  if (params === undefined || params.length === 0) {
    const results = await target.exec(sql)
    return { rows: (results.at(-1)?.rows ?? []) as T[] }
  }
  const result = await target.query<T>(sql, [...params])
  return { rows: result.rows }
}
