import type { Mitigation, RegistryEntry, RegistrySource } from '@heatsink/protocol'
import { decodeRawKey, encodeRawKey, readableRawKey } from './raw-key.js'

/** Whether a key is in the registry now, or was and has been demoted. */
export type RegistryStatus = 'active' | 'demoted'

/** One row of hot_key_registry, with times as epoch milliseconds. */
export interface RegistryRecord {
  key: string
  keyHash: string
  detectedAt: number
  mitigation: Mitigation
  splitFactor: number
  ttlSeconds: number | null
  status: RegistryStatus
  source: RegistrySource
  version: number
  updatedAt: number
  expiresAt: number | null
  /** Cluster-wide rate when the row last changed, if the change came with one. */
  requestsPerSecond: number | null
}

/** A hot_key_registry row as the drivers return it: int8 arrives as a string from pg and a number from PGlite. */
export interface RegistryRow {
  key_hash: string
  /** The readable copy, null when the key holds a NUL; never read back, raw_key_bytes is the key. */
  raw_key: string | null
  detected_at: Date
  mitigation_type: Mitigation
  split_factor: number
  ttl_seconds: number | null
  status: RegistryStatus
  source: RegistrySource
  version: string | number
  updated_at: Date
  expires_at: Date | null
  requests_per_second: number | null
  /** The key, lossless (see raw-key.ts): a Buffer from pg, a Uint8Array from PGlite. */
  raw_key_bytes: Uint8Array
}

/** The record a row holds. */
export function fromRow(row: RegistryRow): RegistryRecord {
  return {
    key: decodeRawKey(row.raw_key_bytes),
    keyHash: row.key_hash,
    detectedAt: row.detected_at.getTime(),
    mitigation: row.mitigation_type,
    splitFactor: row.split_factor,
    ttlSeconds: row.ttl_seconds,
    status: row.status,
    source: row.source,
    version: Number(row.version),
    updatedAt: row.updated_at.getTime(),
    expiresAt: row.expires_at === null ? null : row.expires_at.getTime(),
    requestsPerSecond: row.requests_per_second,
  }
}

/** The parameters of UPSERT_ROW for a record, in order. */
export function toRowParams(record: RegistryRecord): unknown[] {
  return [
    record.keyHash,
    readableRawKey(record.key),
    new Date(record.detectedAt),
    record.mitigation,
    record.splitFactor,
    record.ttlSeconds,
    record.status,
    record.source,
    record.version,
    new Date(record.updatedAt),
    record.expiresAt === null ? null : new Date(record.expiresAt),
    record.requestsPerSecond,
    encodeRawKey(record.key),
  ]
}

/** The wire entry of an active record. */
export function toEntry(record: RegistryRecord): RegistryEntry {
  return {
    key: record.key,
    keyHash: record.keyHash,
    mitigation: record.mitigation,
    splitFactor: record.splitFactor,
    ttlSeconds: record.ttlSeconds,
    source: record.source,
    status: 'active',
    detectedAt: record.detectedAt,
    expiresAt: record.expiresAt,
    version: record.version,
  }
}
