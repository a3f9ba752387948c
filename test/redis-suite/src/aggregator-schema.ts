import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** A Postgres schema of one aggregator's own, and the URL that confines a client to it. */
export interface AggregatorSchema {
  /** The database URL with `-c search_path=<schema>` in its options, which the aggregator passes on. */
  readonly url: string
  drop(): Promise<void>
}

/** Creates a fresh schema `redis_suite_<random>` in the database at `databaseUrl`. */
export async function createAggregatorSchema(databaseUrl: string): Promise<AggregatorSchema> {
  const schema = `redis_suite_${randomBytes(6).toString('hex')}`
  await query(databaseUrl, `CREATE SCHEMA ${schema}`)
  const url = new URL(databaseUrl)
  const options = [url.searchParams.get('options'), `-c search_path=${schema}`].filter(Boolean).join(' ')
  url.searchParams.set('options', options)
  // libpq reads '+' literally in URIs; node-postgres and libpq both decode %20.
  url.search = url.searchParams.toString().replaceAll('+', '%20')
  return {
    url: url.toString(),
    drop: () => query(databaseUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`),
  }
}

async function query(databaseUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
