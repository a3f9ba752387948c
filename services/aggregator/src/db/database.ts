/** Rows a statement returned. */
export interface QueryResult<T> {
  rows: T[]
}

/** Something statements can be sent to: the database, a transaction, or a session. */
export interface Queryable {
  /**
   * Runs `sql` with `params` bound to $1, $2, ... Without params, several statements separated by semicolons
   * may be sent at once (the simple query protocol, as node-postgres does); the last one's rows are returned.
   */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>>
}

/** The registry's Postgres: a pg.Pool on DATABASE_URL, or the embedded PGlite. Same SQL, same migrations. */
export interface Database extends Queryable {
  /** Which implementation this is, for logs and readiness reports. */
  readonly kind: 'postgres' | 'pglite'
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /**
   * Runs `fn` on one connection held for its whole duration, so session state (advisory locks, BEGIN sent as
   * a statement) lasts across its statements. Meant for start-up work such as migrations.
   */
  session<T>(fn: (session: Queryable) => Promise<T>): Promise<T>
  /** Closes every connection; later calls fail. */
  close(): Promise<void>
}
