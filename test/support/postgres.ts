import pg from 'pg'
import { type UseFixtureOptions, useFixture } from './fixture-hooks.js'
import { testSchemaName } from './namespace.js'
import { requireServiceUrl } from './service-env.js'

// A connection the test forgot to close can hold a lock on the schema; fail cleanup instead of hanging.
const DROP_LOCK_TIMEOUT = '10s'

/** One test's private schema in the shared test database. */
export interface TestPostgres {
  /** Connection string whose search_path is only `schema`, so any client built from it works inside it. */
  readonly url: string
  /** `t_<random>`. */
  readonly schema: string
  /** A pool on `url`, ended by cleanup(). */
  readonly pool: pg.Pool
  /** Ends the pool and drops the schema with everything in it. */
  cleanup(): Promise<void>
}

/** Options of createTestPostgres. */
export interface CreateTestPostgresOptions {
  /** Default: DATABASE_URL, published by the global setup. */
  readonly url?: string
}

/** Creates a fresh schema `t_<random>` in the shared test database and a URL and pool confined to it. */
export async function createTestPostgres(options: CreateTestPostgresOptions = {}): Promise<TestPostgres> {
  const baseUrl = options.url ?? requireServiceUrl('DATABASE_URL')
  const schema = testSchemaName()
  await withClient(baseUrl, (client) => client.query(`CREATE SCHEMA ${client.escapeIdentifier(schema)}`))
  const url = withSearchPath(baseUrl, schema)
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  let cleaning: Promise<void> | undefined
  return {
    url,
    schema,
    pool,
    cleanup: () =>
      (cleaning ??= (async () => {
        await pool.end()
        await withClient(baseUrl, async (client) => {
          await client.query(`SET lock_timeout = '${DROP_LOCK_TIMEOUT}'`)
          await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`)
        })
      })()),
  }
}

/** Gives every test in the calling file (or the file as a whole, with scope 'all') its own TestPostgres. */
export function useTestPostgres(
  options: UseFixtureOptions & CreateTestPostgresOptions = {},
): () => TestPostgres {
  return useFixture(
    'useTestPostgres',
    () => createTestPostgres(options),
    (postgres) => postgres.cleanup(),
    options,
  )
}

/**
 * The URL with `-c search_path=<schema>` added to its `options` parameter, which node-postgres and libpq both
 * send at connect time. Spaces are written %20, since libpq does not decode '+' in URIs.
 */
function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url)
  const existing = parsed.searchParams.get('options')
  const setting = `-c search_path=${schema}`
  parsed.searchParams.set('options', existing ? `${existing} ${setting}` : setting)
  parsed.search = parsed.searchParams.toString().replaceAll('+', '%20')
  return parsed.toString()
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}
