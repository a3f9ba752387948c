import { decodeRegistryEvent, keyHash } from '@heatsink/protocol'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../src/db/database.js'
import { createPgDatabase } from '../src/db/pg-database.js'
import { InvalidRegistryInputError } from '../src/errors.js'
import { createMetrics } from '../src/metrics.js'
import { RegistryService } from '../src/registry/registry-service.js'
import { databaseImplementations, ManualClock, openPostgres, type TestDatabase } from './support/fixtures.js'

interface EventRow {
  version: string | number
  type: string
  raw_key: string
  actor: string
  reason: string
  requests_per_second: number | null
  payload: unknown
}

async function events(db: Database): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    // payload is text since 0002_raw_key_bytes; parsed here so the assertions compare objects.
    'SELECT version, type, raw_key, actor, reason, requests_per_second, payload::jsonb AS payload FROM hot_key_events ORDER BY version',
  )
  return rows
}

const manual = { source: 'manual', actor: 'ops', reason: 'test' } as const
const auto = { source: 'auto', actor: 'detector', reason: 'rate above threshold' } as const

describe.each(databaseImplementations)('RegistryService on $name', ({ open }) => {
  let test: TestDatabase
  let clock: ManualClock
  let registry: RegistryService

  beforeEach(async () => {
    test = await open()
    clock = new ManualClock()
    registry = new RegistryService(test.db, { clock })
  })
  afterEach(async () => {
    await test.cleanup()
  })

  it('promotes a new key: version 1, the row, and an audit row whose payload is the encoded event', async () => {
    const result = await registry.promote({
      key: 'product:1',
      mitigation: 'local_cache',
      ...auto,
      requestsPerSecond: 4200,
    })

    expect(result).toMatchObject({ created: true, changed: true })
    expect(result.entry).toEqual({
      key: 'product:1',
      keyHash: keyHash('product:1'),
      mitigation: 'local_cache',
      splitFactor: 1,
      ttlSeconds: null,
      source: 'auto',
      status: 'active',
      detectedAt: clock.time,
      expiresAt: null,
      version: 1,
    })
    const [event, ...rest] = await events(test.db)
    expect(rest).toEqual([])
    expect(event).toMatchObject({
      type: 'promote',
      raw_key: 'product:1',
      actor: 'detector',
      requests_per_second: 4200,
    })
    expect(Number(event?.version)).toBe(1)
    expect(decodeRegistryEvent(JSON.stringify(event?.payload))).toEqual({
      v: 1,
      kind: 'registry',
      type: 'promote',
      version: 1,
      at: clock.time,
      entry: result.entry,
    })
  })

  it('records an update only when a manual promotion changes something, and keeps detectedAt', async () => {
    const first = await registry.promote({ key: 'k', mitigation: 'split', splitFactor: 4, ...manual })
    clock.advance(5_000)

    const same = await registry.promote({ key: 'k', mitigation: 'split', splitFactor: 4, ...manual })
    expect(same).toEqual({ entry: first.entry, created: false, changed: false })

    const wider = await registry.promote({ key: 'k', mitigation: 'split', splitFactor: 16, ...manual })
    expect(wider).toMatchObject({ created: false, changed: true })
    expect(wider.entry).toMatchObject({ splitFactor: 16, version: 2, detectedAt: first.entry.detectedAt })
    expect((await events(test.db)).map((e) => e.type)).toEqual(['promote', 'update'])
  })

  it('never lets an automatic promotion override an active entry, while a manual one takes over an automatic entry', async () => {
    await registry.promote({ key: 'pinned', mitigation: 'coalesce', ...manual })
    const autoOnManual = await registry.promote({ key: 'pinned', mitigation: 'local_cache', ...auto })
    expect(autoOnManual).toMatchObject({
      changed: false,
      entry: { mitigation: 'coalesce', source: 'manual' },
    })

    await registry.promote({ key: 'detected', mitigation: 'local_cache', ...auto })
    const takeOver = await registry.promote({ key: 'detected', mitigation: 'local_cache', ...manual })
    expect(takeOver).toMatchObject({ changed: true, entry: { source: 'manual', version: 3 } })
    expect(await registry.demote('detected', { ...auto, onlySource: 'auto' })).toBe(false)
    expect(await registry.get('detected')).toMatchObject({ source: 'manual' })
  })

  it('expires a promotion when its ttl runs out, and a renewal moves the expiry', async () => {
    const start = clock.time
    const first = await registry.promote({
      key: 'sale',
      mitigation: 'local_cache',
      ttlSeconds: 60,
      ...manual,
    })
    expect(first.entry.expiresAt).toBe(start + 60_000)

    clock.advance(10_000)
    const renewed = await registry.promote({
      key: 'sale',
      mitigation: 'local_cache',
      ttlSeconds: 60,
      ...manual,
    })
    expect(renewed).toMatchObject({ changed: true, entry: { expiresAt: start + 70_000 } })

    expect(await registry.expireDue(start + 69_999)).toBe(0)
    expect(await registry.get('sale')).toBeDefined()
    expect(await registry.expireDue(start + 70_000)).toBe(1)
    expect(await registry.get('sale')).toBeUndefined()
    const last = (await events(test.db)).at(-1)
    expect(last).toMatchObject({ type: 'demote', reason: 'ttl expired', raw_key: 'sale' })
    expect(await registry.expireDue(start + 80_000)).toBe(0)
  })

  it('demotes only active keys, and only the given source when asked', async () => {
    expect(await registry.demote('never', { actor: 'ops', reason: 'x' })).toBe(false)
    await registry.promote({ key: 'manual', mitigation: 'local_cache', ...manual })
    expect(await registry.demote('manual', { actor: 'detector', reason: 'cooled', onlySource: 'auto' })).toBe(
      false,
    )
    expect(await registry.demote('manual', { actor: 'ops', reason: 'done', requestsPerSecond: 3 })).toBe(true)
    expect(await registry.demote('manual', { actor: 'ops', reason: 'done' })).toBe(false)

    const demote = (await events(test.db)).at(-1)
    expect(demote).toMatchObject({ type: 'demote', actor: 'ops', reason: 'done', requests_per_second: 3 })
    expect(decodeRegistryEvent(JSON.stringify(demote?.payload))).toMatchObject({
      type: 'demote',
      key: 'manual',
      keyHash: keyHash('manual'),
      version: 2,
    })
  })

  it('reactivates a demoted key with a fresh promote event and detection time', async () => {
    await registry.promote({ key: 'again', mitigation: 'local_cache', ...auto })
    await registry.demote('again', { actor: 'detector', reason: 'cooled' })
    clock.advance(60_000)

    const back = await registry.promote({ key: 'again', mitigation: 'coalesce', ...auto })
    expect(back).toMatchObject({
      created: true,
      entry: { mitigation: 'coalesce', detectedAt: clock.time, version: 3 },
    })
    expect((await events(test.db)).map((e) => e.type)).toEqual(['promote', 'demote', 'promote'])
  })

  it('reads the active entries and their version as one snapshot, and remembers demoted keys', async () => {
    await registry.promote({ key: 'a', mitigation: 'local_cache', ...auto })
    await registry.promote({ key: 'b', mitigation: 'split', splitFactor: 8, ...manual })
    await registry.demote('a', { actor: 'detector', reason: 'cooled' })

    const snapshot = await registry.snapshot()
    expect(snapshot).toMatchObject({ v: 1, kind: 'snapshot', version: 3, at: clock.time })
    expect(snapshot.entries.map((e) => e.key)).toEqual(['b'])
    expect(await registry.list()).toEqual(snapshot.entries)
    expect(await registry.known('a')).toBe(true)
    expect(await registry.get('a')).toBeUndefined()
    expect(await registry.known('c')).toBe(false)
  })

  it('rejects values the agents would reject, naming the field, and writes nothing', async () => {
    const bad = [
      [{ key: 'k', mitigation: 'split', splitFactor: 3, ...manual }, 'splitFactor'],
      [{ key: 'k', mitigation: 'local_cache', splitFactor: 8, ...manual }, 'splitFactor'],
      [{ key: 'k', mitigation: 'local_cache', ttlSeconds: 0, ...manual }, 'ttlSeconds'],
      [{ key: 'x'.repeat(1025), mitigation: 'local_cache', ...manual }, 'key'],
      [{ key: 'k', mitigation: 'evict', ...manual }, 'mitigation'],
    ] as const
    for (const [input, field] of bad) {
      // biome-ignore lint/suspicious/noExplicitAny: deliberately wrong input
      const error = await registry.promote(input as any).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(InvalidRegistryInputError)
      expect(error).toMatchObject({ field })
    }
    expect(await events(test.db)).toEqual([])
  })
})

describe('RegistryService across replicas', () => {
  let one: TestDatabase & { url: string }
  let other: TestDatabase

  beforeEach(async () => {
    one = await openPostgres()
    // A second pool on the same schema: another replica.
    const db = createPgDatabase(one.url)
    other = { db, cleanup: () => db.close() }
  })
  afterEach(async () => {
    await other.cleanup()
    await one.cleanup()
  })

  it('gives concurrent changes from two replicas gap-free versions, each row matching its event', async () => {
    const metrics = createMetrics()
    const replicas = [new RegistryService(one.db, { metrics }), new RegistryService(other.db, { metrics })]
    const keys = Array.from({ length: 30 }, (_, i) => `concurrent:${i}`)

    await Promise.all(
      keys.map((key, i) => replicas[i % 2]!.promote({ key, mitigation: 'local_cache', ...auto })),
    )
    // The same key from both replicas at once: exactly one promotion.
    const races = await Promise.all(
      replicas.map((replica) => replica.promote({ key: 'contested', mitigation: 'local_cache', ...manual })),
    )

    expect(races.filter((result) => result.created)).toHaveLength(1)
    const versions = (await events(one.db)).map((e) => Number(e.version))
    expect(versions).toEqual(Array.from({ length: keys.length + 1 }, (_, i) => i + 1))
    const snapshot = await replicas[1]!.snapshot()
    expect(snapshot.version).toBe(keys.length + 1)
    expect(new Set(snapshot.entries.map((e) => e.version)).size).toBe(keys.length + 1)
  })
})
