import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import {
  DEFAULT_DATABASE_URL,
  ensurePostgres,
  freePort,
  type RunningService,
  ServiceUnavailableError,
} from '../src/index.js'
import { defaultPostgresBinDirs, findPostgresBinaries } from '../src/postgres-binaries.js'
import { isListening } from '../src/tcp-probe.js'

const hasPostgresServer = findPostgresBinaries(defaultPostgresBinDirs()) !== undefined

describe('ensurePostgres', () => {
  const services: RunningService[] = []
  afterEach(async () => {
    await Promise.all(services.splice(0).map((service) => service.stop()))
  })

  it.skipIf(!hasPostgresServer)('starts a private cluster when nothing listens on a local port', async () => {
    const unusedPort = await freePort()
    const service = await ensurePostgres({ url: `postgres://postgres@127.0.0.1:${unusedPort}/hs_private` })
    services.push(service)

    expect(service.started).toBe(true)
    const port = Number(new URL(service.url).port)
    expect(port).not.toBe(5432)
    const pool = new pg.Pool({ connectionString: service.url })
    try {
      const { rows } = await pool.query<{ db: string; fsync: string }>(
        "SELECT current_database() AS db, current_setting('fsync') AS fsync",
      )
      expect(rows).toEqual([{ db: 'hs_private', fsync: 'off' }])
    } finally {
      await pool.end()
    }

    await service.stop()
    expect(await isListening('127.0.0.1', port)).toBe(false)
  })

  it('reuses a server that answers SELECT 1 and leaves it running on stop()', async () => {
    const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL
    const service = await ensurePostgres({ url })

    expect(service).toMatchObject({ url, started: false })
    await service.stop()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    } finally {
      await client.end()
    }
  })

  it('says how to get Postgres when nothing listens and the server is not installed', async () => {
    const url = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`
    const error = await ensurePostgres({ url, binDirs: [] }).catch((caught: unknown) => caught)

    expect(error).toBeInstanceOf(ServiceUnavailableError)
    expect(error).toMatchObject({ code: 'E_SERVICE_UNAVAILABLE', service: 'postgres', url })
    const { message } = error as ServiceUnavailableError
    expect(message).toContain('DATABASE_URL')
    expect(message).toContain('apt-get install -y --no-install-recommends postgresql')
    expect(message).toContain('brew install postgresql')
    expect(message).toContain('Docker')
  })
})
