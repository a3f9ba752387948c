// Every statement the registry runs, one per constant; the tables are defined in migrations/0001_registry.sql,
// keys as bytes by 0002_raw_key_bytes.sql: raw_key_bytes is the key Heatsink reads, raw_key a copy for people.

const ROW_COLUMNS = [
  'key_hash',
  'raw_key',
  'detected_at',
  'mitigation_type',
  'split_factor',
  'ttl_seconds',
  'status',
  'source',
  'version',
  'updated_at',
  'expires_at',
  'requests_per_second',
  'raw_key_bytes',
]

function columns(alias?: string): string {
  return ROW_COLUMNS.map((column) => (alias === undefined ? column : `${alias}.${column}`)).join(', ')
}

/**
 * Locks the registry for one change, until its transaction ends. No parameters. Every writer takes this lock
 * first, so changes to any key are serialized across replicas and a change that turns out to change nothing
 * ends without taking a version.
 */
export const LOCK_REGISTRY = 'SELECT version FROM registry_meta FOR UPDATE'

/** Takes the next registry version for the change in progress. No parameters. */
export const NEXT_VERSION = 'UPDATE registry_meta SET version = version + 1 RETURNING version'

/** One key's row, active or demoted. $1 key_hash. */
export const SELECT_ROW = `SELECT ${columns()} FROM hot_key_registry WHERE key_hash = $1`

/** Every active row, oldest promotion first. No parameters. */
export const SELECT_ACTIVE = `SELECT ${columns()} FROM hot_key_registry WHERE status = 'active'
ORDER BY detected_at, key_hash`

/**
 * The registry version and every active row, as `registry_version` plus the row columns; one row with null
 * columns when nothing is active. One statement, so version and rows come from one MVCC snapshot. No parameters.
 */
export const SELECT_SNAPSHOT = `SELECT m.version AS registry_version, ${columns('r')}
FROM registry_meta m LEFT JOIN hot_key_registry r ON r.status = 'active'
ORDER BY r.detected_at, r.key_hash`

/**
 * Writes a key's whole row: inserts it, or replaces the existing one (reactivation, update, demotion).
 * $1 key_hash, $2 raw_key (readable copy or null), $3 detected_at, $4 mitigation_type, $5 split_factor,
 * $6 ttl_seconds, $7 status, $8 source, $9 version, $10 updated_at, $11 expires_at, $12 requests_per_second,
 * $13 raw_key_bytes.
 */
export const UPSERT_ROW = `INSERT INTO hot_key_registry (${columns()})
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (key_hash) DO UPDATE SET
  raw_key = EXCLUDED.raw_key, detected_at = EXCLUDED.detected_at, mitigation_type = EXCLUDED.mitigation_type,
  split_factor = EXCLUDED.split_factor, ttl_seconds = EXCLUDED.ttl_seconds, status = EXCLUDED.status,
  source = EXCLUDED.source, version = EXCLUDED.version, updated_at = EXCLUDED.updated_at,
  expires_at = EXCLUDED.expires_at, requests_per_second = EXCLUDED.requests_per_second,
  raw_key_bytes = EXCLUDED.raw_key_bytes`

/**
 * Appends one change to the audit trail, which is also the publisher's outbox.
 * $1 version, $2 key_hash, $3 raw_key (readable copy or null), $4 type, $5 actor, $6 reason,
 * $7 requests_per_second, $8 mitigation_type, $9 split_factor, $10 ttl_seconds, $11 source, $12 at,
 * $13 onset_at, $14 payload (the encoded RegistryEvent, stored as the text it was encoded to), $15 raw_key_bytes.
 */
export const INSERT_EVENT = `INSERT INTO hot_key_events (version, key_hash, raw_key, type, actor, reason,
  requests_per_second, mitigation_type, split_factor, ttl_seconds, source, at, onset_at, payload, raw_key_bytes)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`

/**
 * Events to publish, oldest first: those above $1 (the version already published) up to $2 (the snapshot's
 * version), at most the newest $3 of them. $1 after, $2 up_to, $3 limit.
 */
export const SELECT_EVENTS_TO_PUBLISH = `SELECT version, type, onset_at, payload FROM hot_key_events
WHERE version > greatest($1::bigint, $2::bigint - $3::bigint) AND version <= $2::bigint
ORDER BY version`

/** Keys of active rows whose expiry has passed, soonest first. $1 now. */
export const SELECT_EXPIRED_KEYS = `SELECT raw_key_bytes FROM hot_key_registry
WHERE status = 'active' AND expires_at <= $1 ORDER BY expires_at`

const EVENT_COLUMNS = `version, raw_key_bytes, type, actor, reason, requests_per_second, mitigation_type,
  split_factor, ttl_seconds, source, at, onset_at`

/**
 * The audit trail, newest first: events above version $1, of the key $2 (a key_hash; null: every key), at most
 * $3 of them. $1 after_version, $2 key_hash, $3 limit.
 */
export const SELECT_RECENT_EVENTS = `SELECT ${EVENT_COLUMNS} FROM hot_key_events
WHERE version > $1::bigint AND ($2::text IS NULL OR key_hash = $2::text)
ORDER BY version DESC LIMIT $3::integer`

/** The rate each active key had when it was promoted (null for manual promotions). No parameters. */
export const SELECT_PROMOTION_RATES = `SELECT raw_key_bytes, requests_per_second FROM hot_key_registry
WHERE status = 'active'`
