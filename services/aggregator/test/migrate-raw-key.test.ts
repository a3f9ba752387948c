import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeRegistryEvent, encodeRegistryEvent, keyHash, WIRE_VERSION } from '@heatsink/protocol'
import { useTestPostgres } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { MIGRATIONS_DIR, migrate } from '../src/db/migrate.js'
import { createPgDatabase } from '../src/db/pg-database.js'
import { RegistryService } from '../src/registry/registry-service.js'
import { RegistryStore } from '../src/registry/registry-store.js'

const postgres = useTestPostgres()
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('0002_raw_key_bytes on a registry written before it', () => {
  it('keeps every existing key and event, and later changes go on from them', async () => {
    const before = mkdtempSync(join(tmpdir(), 'heatsink-migrations-'))
    cleanups.push(() => rmSync(before, { recursive: true, force: true }))
    copyFileSync(join(MIGRATIONS_DIR, '0001_registry.sql'), join(before, '0001_registry.sql'))
    const db = createPgDatabase(postgres().url)
    cleanups.push(() => db.close())
    expect(await migrate(db, { dir: before })).toEqual(['0001_registry'])

    // A row and its event as the code before 0002 wrote them (payload as jsonb).
    const key = 'legacy:ключ:🔥'
    const at = Date.parse('2026-01-02T03:04:05.678Z')
    const entry = {
      key,
      keyHash: keyHash(key),
      mitigation: 'local_cache',
      splitFactor: 1,
      ttlSeconds: null,
      source: 'manual',
      status: 'active',
      detectedAt: at,
      expiresAt: null,
      version: 1,
    } as const
    const payload = encodeRegistryEvent({
      v: WIRE_VERSION,
      kind: 'registry',
      type: 'promote',
      version: 1,
      at,
      entry,
    })
    await db.query(
      `UPDATE registry_meta SET version = 1;
      INSERT INTO hot_key_registry (key_hash, raw_key, detected_at, mitigation_type, status, source, version, updated_at)
      VALUES ('${entry.keyHash}', '${key}', now(), 'local_cache', 'active', 'manual', 1, now());
      INSERT INTO hot_key_events (version, key_hash, raw_key, type, actor, reason, mitigation_type, split_factor,
        source, at, payload)
      VALUES (1, '${entry.keyHash}', '${key}', 'promote', 'api', 'test', 'local_cache', 1, 'manual', now(),
        '${payload}'::jsonb)`,
    )

    // 0003 widens the mitigation CHECK of the same tables (replica_read).
    expect(await migrate(db)).toEqual(['0002_raw_key_bytes', '0003_replica_read'])
    const registry = new RegistryService(db)
    expect((await registry.list()).map((e) => e.key)).toEqual([key])
    const [event] = await new RegistryStore().eventsToPublish(db, 0, 1, 10)
    expect(decodeRegistryEvent(event?.payload ?? '')).toMatchObject({ version: 1, entry: { key } })

    expect(await registry.demote(key, { actor: 'test', reason: 'test' })).toBe(true)
    const { rows } = await db.query<{ version: string; raw_key: string }>(
      'SELECT version, raw_key FROM hot_key_events ORDER BY version',
    )
    expect(rows).toEqual([
      { version: '1', raw_key: key },
      { version: '2', raw_key: key },
    ])
    const promoted = await registry.promote({
      key,
      mitigation: 'replica_read',
      source: 'manual',
      actor: 'test',
      reason: 'test',
    })
    expect(promoted).toMatchObject({ entry: { mitigation: 'replica_read', version: 3 } })
  })
})
