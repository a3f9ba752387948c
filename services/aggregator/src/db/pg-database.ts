import pg from 'pg'
import type { Logger } from 'pino'
import { isConnectionError } from './connection-errors.js'
import type { Database, Queryable, QueryResult } from './database.js'

/** Tuning of createPgDatabase; the defaults suit a control plane that writes rarely. */
export interface PgDatabaseOptions {
  readonly log?: Logger
  /** Most connections the pool opens. Default 10. */
  readonly max?: number
  /** How long to wait for a connection before failing. Default 5000 ms. */
  readonly connectionTimeoutMs?: number
  /** How long to wait for a statement's answer before failing and discarding its connection. Default 10000 ms. */
  readonly queryTimeoutMs?: number
}

/**
 * A Database on a pg.Pool. The URL's parameters are passed through untouched, so `options=-c search_path=...`
 * (how the tests confine each test to its own schema) applies to every connection.
 */
export function createPgDatabase(url: string, options: PgDatabaseOptions = {}): Database {
  // Both timeouts bound every call, so an unreachable or silent server fails requests instead of wedging
  // them, and the pool (which discards a connection that failed) reconnects on its own once Postgres is back.
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    idleTimeoutMillis: 10_000,
    keepAlive: true,
    application_name: 'heatsink-aggregator',
  })
  // An idle connection that breaks (server restart, network cut) is reported here; without a listener the
  // pool's 'error' event would crash the process.
  pool.on('error', (error) => options.log?.warn({ err: error }, 'idle postgres connection failed'))

  const query = async <T>(target: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) => {
    const result = await target.query(sql, params === undefined ? undefined : [...params])
    return { rows: result.rows as T[] } satisfies QueryResult<T>
  }
  const asQueryable = (client: pg.PoolClient): Queryable => ({
    query: (sql, params) => query(client, sql, params),
  })

  // A connection that failed mid-use may be half-open; destroying it makes the pool open a fresh one.
  const withClient = async <T>(use: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect()
    let failure: Error | undefined
    // A checked-out connection that dies between statements emits 'error' with no pool listener attached;
    // unheard, that would crash the process. The next statement on it fails and reports the loss.
    const onError = (error: Error) => {
      failure = error
      options.log?.warn({ err: error }, 'postgres connection failed while in use')
    }
    client.on('error', onError)
    try {
      return await use(client)
    } catch (error) {
      if (isConnectionError(error)) failure ??= error as Error
      throw error
    } finally {
      client.off('error', onError)
      client.release(failure)
    }
  }

  return {
    kind: 'postgres',
    query: (sql, params) => query(pool, sql, params),
    transaction: (fn) =>
      withClient(async (client) => {
        await client.query('BEGIN')
        try {
          const result = await fn(asQueryable(client))
          await client.query('COMMIT')
          return result
        } catch (error) {
          // A failed ROLLBACK means the connection is gone; the transaction died with it.
          await client.query('ROLLBACK').catch(() => {})
          throw error
        }
      }),
    session: (fn) => withClient((client) => fn(asQueryable(client))),
    close: () => pool.end(),
  }
}
