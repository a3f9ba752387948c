import { createNames, decodeRegistryEvent, decodeSnapshot, verifyRegistryMessage } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import type { Redis } from 'ioredis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPgDatabase } from '../src/db/pg-database.js'
import { createMetrics, type Metrics } from '../src/metrics.js'
import { RegistryPublisher } from '../src/registry/registry-publisher.js'
import { RegistryService } from '../src/registry/registry-service.js'
import { ManualClock, openPostgres, recordChannel, type TestDatabase, until } from './support/fixtures.js'

const redisFixture = useTestRedis()

describe('RegistryPublisher', () => {
  let postgres: TestDatabase & { url: string }
  let clock: ManualClock
  let metrics: Metrics
  let redis: Redis
  let names: ReturnType<typeof createNames>
  let publisher: RegistryPublisher
  let registry: RegistryService
  let published: string[]

  // Another replica's publisher: its own Redis connection, on `db` (default: the same pool).
  const otherReplica = (db = postgres.db, replicaMetrics?: Metrics) => {
    const client = redisFixture().client()
    return new RegistryPublisher(db, {
      redis: client,
      names,
      ...(replicaMetrics ? { metrics: replicaMetrics } : {}),
    })
  }
  // An automatic promotion, the detector's everyday change.
  const hot = (key: string, onsetAt?: number) =>
    registry.promote({
      key,
      mitigation: 'local_cache',
      source: 'auto',
      actor: 'detector',
      reason: 'hot',
      ...(onsetAt === undefined ? {} : { onsetAt }),
    })
  const versionInRedis = async () => Number(await redis.hget(names.registrySnapshotKey, 'version'))
  const publishedVersions = () => published.map((text) => decodeRegistryEvent(text).version)

  beforeEach(async () => {
    postgres = await openPostgres()
    clock = new ManualClock()
    metrics = createMetrics()
    names = createNames(redisFixture().namespace)
    redis = redisFixture().client()
    publisher = new RegistryPublisher(postgres.db, { redis, names, clock, metrics })
    // No afterCommit: each test decides when to flush, as a crash between commit and publish would.
    registry = new RegistryService(postgres.db, { clock })
    published = await recordChannel(redisFixture().client(), names.registryChannel)
  })
  afterEach(async () => {
    await publisher.stop()
    await postgres.cleanup()
  })

  it('publishes committed events in version order and stores the snapshot of the last one', async () => {
    await hot('a')
    await registry.promote({
      key: 'b',
      mitigation: 'split',
      splitFactor: 4,
      source: 'manual',
      actor: 'o',
      reason: 'x',
    })
    await registry.demote('a', { actor: 'd', reason: 'cooled' })

    const result = await publisher.flush()

    expect(result).toEqual({ version: 3, published: [1, 2, 3] })
    await until('three events', () => published.length === 3)
    expect(published.map((text) => decodeRegistryEvent(text).type)).toEqual(['promote', 'promote', 'demote'])
    expect(publishedVersions()).toEqual([1, 2, 3])
    expect(await versionInRedis()).toBe(3)
    const snapshot = decodeSnapshot((await redis.hget(names.registrySnapshotKey, 'snapshot')) ?? '')
    expect(snapshot).toMatchObject({ version: 3, entries: [{ key: 'b', splitFactor: 4 }] })
    expect(await publisher.flush()).toEqual({ version: 3, published: [] })
  })

  it('publishes a change committed before a crash on the next flush, from any replica', async () => {
    await registry.promote({
      key: 'orphan',
      mitigation: 'coalesce',
      source: 'manual',
      actor: 'o',
      reason: 'x',
    })
    // The replica that committed died before publishing; another replica's periodic flush finds the event.
    const otherDb = createPgDatabase(postgres.url)
    try {
      const survivor = otherReplica(otherDb)
      expect(await survivor.flush()).toEqual({ version: 1, published: [1] })
    } finally {
      await otherDb.close()
    }
    await until('the orphaned event', () => published.length === 1)
    expect(decodeRegistryEvent(published[0]!)).toMatchObject({ type: 'promote', entry: { key: 'orphan' } })
  })

  it('never publishes a version twice when replicas flush concurrently', async () => {
    const replicas = [otherReplica(), otherReplica(), otherReplica()]
    for (let round = 0; round < 10; round++) {
      await hot(`k${round}`)
      if (round % 3 === 0) await registry.demote(`k${round}`, { actor: 'd', reason: 'cooled' })
      await Promise.all([...replicas, publisher].flatMap((replica) => [replica.flush(), replica.flush()]))
    }

    await until('every version', async () => published.length >= (await versionInRedis()))
    const versions = publishedVersions()
    expect(versions).toEqual(Array.from({ length: 14 }, (_, i) => i + 1))
  })

  it('replaces a snapshot hash whose version is ahead of Postgres or not a number, counts it, and publishes on', async () => {
    await hot('a')
    await publisher.flush()
    await until('version 1 published', () => published.length === 1)
    const repaired = async () => (await metrics.registrySnapshotRepaired.get()).values[0]?.value ?? 0

    // Nothing is ever newer than a forged 999999: left there, no change would be published again.
    await redis.hset(names.registrySnapshotKey, 'version', '999999', 'snapshot', 'forged')
    await publisher.flush()
    expect(await versionInRedis()).toBe(1)
    expect(decodeSnapshot((await redis.hget(names.registrySnapshotKey, 'snapshot')) ?? '').version).toBe(1)
    expect(await repaired()).toBe(1)
    await hot('b')
    await publisher.flush()
    await until('version 2 published', () => published.length === 2)

    // A version Lua's tonumber cannot read would fail every publish script. What was stored is unknown, so the
    // repair publishes no event: it stores version 3's snapshot, which agents find ahead of theirs and reload.
    await redis.hset(names.registrySnapshotKey, 'version', 'abc')
    await hot('c')
    await publisher.flush()
    expect(await repaired()).toBe(2)
    expect(await versionInRedis()).toBe(3)
    await hot('d')
    await publisher.flush()
    await until('version 4 published', () => published.length === 3)
    expect(publishedVersions()).toEqual([1, 2, 4])
  })

  it('replicas repairing a forged version together never publish a version twice nor move the snapshot back', async () => {
    const replicas = [otherReplica(), otherReplica(), otherReplica(), publisher]
    await hot('a')
    await publisher.flush()
    await redis.hset(names.registrySnapshotKey, 'version', '999999')
    for (let round = 0; round < 5; round++) {
      await hot(`k${round}`)
      await Promise.all(replicas.flatMap((replica) => [replica.flush(), replica.flush()]))
    }
    expect(await versionInRedis()).toBe(6)
    const versions = publishedVersions()
    expect(new Set(versions).size).toBe(versions.length)
    expect([...versions].sort((x, y) => x - y)).toEqual(versions)
  })

  it('joins callers onto one pending flush, which still sees a commit made while a flush ran', async () => {
    await hot('first')
    const running = publisher.flush()
    await hot('second')
    const queuedA = publisher.flush()
    const queuedB = publisher.flush()

    expect(queuedA).toBe(queuedB)
    const results = await Promise.all([running, queuedA])
    expect(results.flatMap((result) => result.published)).toEqual([1, 2])
  })

  it('counts published events by type, and observes detection latency once per promotion', async () => {
    const onsetAt = clock.time - 700
    await hot('viral', onsetAt)
    await registry.promote({
      key: 'pinned',
      mitigation: 'split',
      splitFactor: 2,
      source: 'manual',
      actor: 'o',
      reason: 'x',
    })
    await registry.promote({
      key: 'pinned',
      mitigation: 'split',
      splitFactor: 8,
      source: 'manual',
      actor: 'o',
      reason: 'x',
    })
    clock.advance(300)

    await publisher.flush()
    const secondMetrics = createMetrics()
    await otherReplica(postgres.db, secondMetrics).flush()

    const text = await metrics.registry.metrics()
    expect(text).toContain('heatsink_registry_events_published_total{type="promote"} 2')
    expect(text).toContain('heatsink_registry_events_published_total{type="update"} 1')
    expect(text).toContain('heatsink_detection_latency_seconds_count 1')
    expect(text).toContain('heatsink_detection_latency_seconds_bucket{le="0.75"} 0')
    expect(text).toContain('heatsink_detection_latency_seconds_bucket{le="1"} 1')
    // The other replica found nothing left to publish, so it observed nothing.
    expect(await secondMetrics.registry.metrics()).toContain('heatsink_detection_latency_seconds_count 0')
  })

  it('with a registry key, signs every event and the snapshot; the outbox keeps them unsigned', async () => {
    const key = 'registry-key-0123456789abcdefghij'
    const signing = new RegistryPublisher(postgres.db, { redis, names, clock, registryKey: key })
    await hot('a')
    await registry.demote('a', { actor: 'o', reason: 'x' })
    await signing.flush()
    await until('both signed events', () => published.length === 2)
    expect(published.every((text) => verifyRegistryMessage(text, key))).toBe(true)
    expect(publishedVersions()).toEqual([1, 2])
    const snapshot = await redis.hget(names.registrySnapshotKey, 'snapshot')
    expect(verifyRegistryMessage(snapshot ?? '', key)).toBe(true)
    expect(verifyRegistryMessage(snapshot ?? '', `${key}x`)).toBe(false)
    // Unsigned publishing (no key) is as before.
    expect(published.some((text) => 'mac' in JSON.parse(text))).toBe(true)
    await hot('b')
    await publisher.flush()
    await until('the unsigned event', () => published.length === 3)
    expect(JSON.parse(published[2] ?? '{}').mac).toBeUndefined()
  })
})
