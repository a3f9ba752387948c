import { decodeRegistryEvent, keyHash } from '@heatsink/protocol'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ApiServer, buildApi } from '../src/http/app.js'
import { createMetrics } from '../src/metrics.js'
import { encodeRawKey } from '../src/registry/raw-key.js'
import { RegistryService } from '../src/registry/registry-service.js'
import { RegistryStore } from '../src/registry/registry-store.js'
import type { TrafficReader } from '../src/traffic-reader.js'
import { AWKWARD_KEYS, fitsInUrl } from './support/awkward-keys.js'
import { databaseImplementations, ManualClock, type TestDatabase } from './support/fixtures.js'

// Keys Postgres text rejects or alters (NUL, lone surrogates) must round-trip through the registry, its outbox
// and the API on both database implementations (migrations/0002_raw_key_bytes.sql).
describe.each(databaseImplementations)('awkward keys on $name', ({ open }) => {
  let database: TestDatabase
  let clock: ManualClock
  let registry: RegistryService
  let app: ApiServer | undefined

  beforeEach(async () => {
    database = await open()
    clock = new ManualClock(Date.parse('2026-01-02T03:04:05.678Z'))
    registry = new RegistryService(database.db, { clock })
  })
  afterEach(async () => {
    await app?.close()
    app = undefined
    await database.cleanup()
  })

  it.each(AWKWARD_KEYS)(
    'keeps a key with %s through promotion, outbox, snapshot and expiry',
    async (_, key) => {
      const promoted = await registry.promote({
        key,
        mitigation: 'local_cache',
        ttlSeconds: 5,
        source: 'manual',
        actor: 'test',
        reason: 'test',
      })
      expect(promoted).toMatchObject({ created: true, entry: { key, keyHash: keyHash(key) } })
      expect((await registry.list()).map((entry) => entry.key)).toEqual([key])
      expect(await registry.get(key)).toMatchObject({ key })
      expect((await registry.snapshot()).entries.map((entry) => entry.key)).toEqual([key])

      // The readable copy is null exactly when text cannot hold the key; the bytes are always exact.
      const { rows } = await database.db.query<{ raw_key: string | null; raw_key_bytes: Uint8Array }>(
        'SELECT raw_key, raw_key_bytes FROM hot_key_registry',
      )
      expect(rows[0]?.raw_key === null).toBe(key.includes('\0'))
      expect(Buffer.from(rows[0]?.raw_key_bytes ?? []).equals(encodeRawKey(key))).toBe(true)

      clock.advance(5_000)
      expect(await registry.expireDue(clock.now())).toBe(1)
      expect(await registry.get(key)).toBeUndefined()
      expect(await registry.known(key)).toBe(true)

      // The outbox holds each event exactly as encoded, the key intact.
      const outbox = await new RegistryStore().eventsToPublish(database.db, 0, 2, 10)
      const events = outbox.map((event) => decodeRegistryEvent(event.payload))
      expect(
        events.map((event) => [event.type, event.type === 'demote' ? event.key : event.entry.key]),
      ).toEqual([
        ['promote', key],
        ['demote', key],
      ])
    },
  )

  it.each(AWKWARD_KEYS.filter(([, key]) => fitsInUrl(key)))(
    'serves a key with %s over the API: promote 201, list, stats, delete 204',
    async (_, key) => {
      const traffic: TrafficReader = { requestsPerSecond: async () => null, keyStats: async () => undefined }
      app = buildApi({ registry, traffic, metrics: createMetrics(), probes: [], apiToken: null })
      const path = `/hotkeys/${encodeURIComponent(key)}`

      const created = await app.inject({
        method: 'POST',
        url: `${path}/promote`,
        payload: { mitigation: 'split', splitFactor: 4 },
      })
      expect(created.statusCode).toBe(201)
      expect(created.json()).toMatchObject({ key, keyHash: keyHash(key), splitFactor: 4 })
      const listed = (await app.inject({ url: '/hotkeys' })).json().hotkeys
      expect(listed.map((entry: { key: string }) => entry.key)).toEqual([key])
      const stats = await app.inject({ url: `${path}/stats` })
      expect(stats.statusCode).toBe(200)
      expect(stats.json()).toMatchObject({ key })
      expect((await app.inject({ method: 'DELETE', url: path })).statusCode).toBe(204)
      expect((await app.inject({ method: 'DELETE', url: path })).statusCode).toBe(404)
      expect((await app.inject({ url: '/hotkeys' })).json()).toEqual({ hotkeys: [] })
    },
  )

  it('answers POST /hotkeys/a%00b/promote with 201', async () => {
    const traffic: TrafficReader = { requestsPerSecond: async () => null, keyStats: async () => undefined }
    app = buildApi({ registry, traffic, metrics: createMetrics(), probes: [], apiToken: null })
    const created = await app.inject({
      method: 'POST',
      url: '/hotkeys/a%00b/promote',
      payload: { mitigation: 'coalesce' },
    })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({ key: 'a\0b' })
    expect(JSON.parse((await app.inject({ url: '/hotkeys' })).body).hotkeys[0].key).toBe('a\0b')
  })
})
