import type { RegistryEventInput } from '@heatsink/protocol'
import { encodeRegistryEvent } from '@heatsink/protocol'
import type { Queryable } from '../db/database.js'
import { decodeRawKey, encodeRawKey, readableRawKey } from './raw-key.js'
import { fromRow, type RegistryRecord, type RegistryRow, toRowParams } from './registry-record.js'
import {
  INSERT_EVENT,
  LOCK_REGISTRY,
  NEXT_VERSION,
  SELECT_ACTIVE,
  SELECT_EVENTS_TO_PUBLISH,
  SELECT_EXPIRED_KEYS,
  SELECT_ROW,
  SELECT_SNAPSHOT,
  UPSERT_ROW,
} from './registry-sql.js'

/** One row of the audit trail, written in the same transaction as the change it records. */
export interface AuditEvent {
  /** The encoded event; its version, type and key are copied into columns. */
  event: RegistryEventInput
  record: RegistryRecord
  actor: string
  reason: string
  requestsPerSecond: number | null
  /** When the reports first showed the key hot, for automatic promotions. */
  onsetAt: number | null
}

/** An event waiting in the outbox, as the publisher needs it. */
export interface OutboxEvent {
  version: number
  type: RegistryEventInput['type']
  onsetAt: number | null
  /** The encoded RegistryEvent. */
  payload: string
}

/** The registry's version and every active record, read from one snapshot. */
export interface StoredSnapshot {
  version: number
  records: RegistryRecord[]
}

/** The registry's SQL, one method per statement; each takes the database or the transaction to run in. */
export class RegistryStore {
  /** Serializes this transaction with every other registry change until it ends. */
  async lockForChange(tx: Queryable): Promise<void> {
    await tx.query(LOCK_REGISTRY)
  }

  /** Takes the next registry version; call only after lockForChange, in the same transaction. */
  async nextVersion(tx: Queryable): Promise<number> {
    const { rows } = await tx.query<{ version: string | number }>(NEXT_VERSION)
    const row = rows[0]
    if (row === undefined) throw new Error('registry_meta has no row: the migrations did not run')
    return Number(row.version)
  }

  /** A key's record by its hash, active or demoted. */
  async find(q: Queryable, keyHash: string): Promise<RegistryRecord | undefined> {
    const { rows } = await q.query<RegistryRow>(SELECT_ROW, [keyHash])
    return rows[0] === undefined ? undefined : fromRow(rows[0])
  }

  /** Every active record, oldest promotion first. */
  async active(q: Queryable): Promise<RegistryRecord[]> {
    const { rows } = await q.query<RegistryRow>(SELECT_ACTIVE)
    return rows.map(fromRow)
  }

  /** The registry version with the active records of that version. */
  async snapshot(q: Queryable): Promise<StoredSnapshot> {
    const { rows } = await q.query<RegistryRow & { registry_version: string | number }>(SELECT_SNAPSHOT)
    const first = rows[0]
    if (first === undefined) throw new Error('registry_meta has no row: the migrations did not run')
    // The LEFT JOIN yields one row of nulls when nothing is active.
    const records = rows.filter((row) => row.key_hash !== null).map(fromRow)
    return { version: Number(first.registry_version), records }
  }

  /** Inserts or replaces a key's row. */
  async save(tx: Queryable, record: RegistryRecord): Promise<void> {
    await tx.query(UPSERT_ROW, toRowParams(record))
  }

  /** Appends a change to the audit trail (and so to the outbox). */
  async append(tx: Queryable, audit: AuditEvent): Promise<void> {
    const { event, record } = audit
    await tx.query(INSERT_EVENT, [
      event.version,
      record.keyHash,
      readableRawKey(record.key),
      event.type,
      audit.actor,
      audit.reason,
      audit.requestsPerSecond,
      record.mitigation,
      record.splitFactor,
      record.ttlSeconds,
      record.source,
      new Date(event.at),
      audit.onsetAt === null ? null : new Date(audit.onsetAt),
      encodeRegistryEvent(event),
      encodeRawKey(record.key),
    ])
  }

  /** Events above version `after` up to `upTo`, oldest first; only the newest `limit` when there are more. */
  async eventsToPublish(q: Queryable, after: number, upTo: number, limit: number): Promise<OutboxEvent[]> {
    const { rows } = await q.query<{
      version: string | number
      type: OutboxEvent['type']
      onset_at: Date | null
      payload: string
    }>(SELECT_EVENTS_TO_PUBLISH, [after, upTo, limit])
    return rows.map((row) => ({
      version: Number(row.version),
      type: row.type,
      onsetAt: row.onset_at === null ? null : row.onset_at.getTime(),
      // Stored as text since 0002, exactly as encoded.
      payload: row.payload,
    }))
  }

  /** Keys of active records whose expiry is at or before `now`. */
  async expiredKeys(q: Queryable, now: number): Promise<string[]> {
    const { rows } = await q.query<{ raw_key_bytes: Uint8Array }>(SELECT_EXPIRED_KEYS, [new Date(now)])
    return rows.map((row) => decodeRawKey(row.raw_key_bytes))
  }
}
