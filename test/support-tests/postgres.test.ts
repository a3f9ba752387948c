import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestPostgres, type TestPostgres, useTestPostgres } from '../support/index.js'

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<T>(text)).rows
  } finally {
    await client.end()
  }
}

const databaseUrl = () => process.env.DATABASE_URL ?? ''

describe('createTestPostgres', () => {
  const created: TestPostgres[] = []
  const make = async () => {
    const postgres = await createTestPostgres()
    created.push(postgres)
    return postgres
  }
  afterEach(async () => {
    await Promise.all(created.splice(0).map((postgres) => postgres.cleanup()))
  })

  it('puts a table created through its URL in the private schema, not public', async () => {
    const postgres = await make()
    expect(postgres.schema).toMatch(/^t_[0-9a-f]{12}$/)

    await query(postgres.url, 'CREATE TABLE hs_support_widgets (id int PRIMARY KEY)')

    const placed = await query<{ table_schema: string }>(
      databaseUrl(),
      `SELECT table_schema FROM information_schema.tables WHERE table_name = 'hs_support_widgets'`,
    )
    expect(placed.map((row) => row.table_schema)).toContain(postgres.schema)
    expect(placed.map((row) => row.table_schema)).not.toContain('public')
    const { rows } = await postgres.pool.query<{ schema: string }>('SELECT current_schema() AS schema')
    expect(rows).toEqual([{ schema: postgres.schema }])
  })

  it('keeps two schemas apart: the same table name holds different rows', async () => {
    const a = await make()
    const b = await make()
    for (const [postgres, name] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      await postgres.pool.query('CREATE TABLE items (name text)')
      await postgres.pool.query('INSERT INTO items VALUES ($1)', [name])
    }

    expect((await a.pool.query('SELECT name FROM items')).rows).toEqual([{ name: 'a' }])
    expect((await b.pool.query('SELECT name FROM items')).rows).toEqual([{ name: 'b' }])
  })

  it('cleanup ends the pool and drops the schema with its tables', async () => {
    const postgres = await createTestPostgres()
    await postgres.pool.query('CREATE TABLE doomed (id int)')

    await postgres.cleanup()

    expect(postgres.pool.ended).toBe(true)
    const left = await query(databaseUrl(), `SELECT 1 FROM pg_namespace WHERE nspname = '${postgres.schema}'`)
    expect(left).toEqual([])
  })
})

describe('useTestPostgres with scope all', () => {
  const postgres = useTestPostgres({ scope: 'all' })
  const schemas: string[] = []

  it('provides a TestPostgres inside a test', async () => {
    schemas.push(postgres().schema)
    await postgres().pool.query('CREATE TABLE shared (id int)')
  })

  it('shares it with the next test in the file', async () => {
    expect(postgres().schema).toBe(schemas[0])
    const { rows } = await postgres().pool.query('SELECT count(*)::int AS n FROM shared')
    expect(rows).toEqual([{ n: 0 }])
  })
})
