import pg from 'pg'

/** Resolves once the Postgres at `url` answers `SELECT 1`; rejects with the connection or query error otherwise. */
export async function checkPostgres(url: string, timeoutMs = 2_000): Promise<void> {
  await withPostgresClient(url, timeoutMs, async (client) => {
    await client.query('SELECT 1')
  })
}

/** Runs `use` with a connected client that is always closed afterwards. */
export async function withPostgresClient<T>(
  url: string,
  timeoutMs: number,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs })
  // A server that dies mid-session emits 'error' on the client; the pending query rejects with it anyway.
  client.on('error', () => {})
  try {
    await client.connect()
    return await use(client)
  } finally {
    await client.end().catch(() => {})
  }
}
