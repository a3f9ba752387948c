import { keyHash, type RegistryChange } from '@heatsink/protocol'
import { isConnectionError } from '../db/connection-errors.js'
import type { Database } from '../db/database.js'
import { RegistryUnavailableError } from '../errors.js'
import { decodeRawKey } from './raw-key.js'
import { SELECT_PROMOTION_RATES, SELECT_RECENT_EVENTS } from './registry-sql.js'

/** Most events one listing returns. */
export const MAX_EVENTS = 500

/** Which events to list. */
export interface EventQuery {
  /** Only events above this registry version (for following the log). Default 0. */
  afterVersion?: number
  /** Only this key's events. */
  key?: string
  /** Default 50, at most MAX_EVENTS. */
  limit?: number
}

interface EventRow {
  version: string | number
  raw_key_bytes: Uint8Array
  type: RegistryChange['type']
  actor: string
  reason: string
  requests_per_second: number | null
  mitigation_type: RegistryChange['mitigation']
  split_factor: number
  ttl_seconds: number | null
  source: RegistryChange['source']
  at: Date
  onset_at: Date | null
}

/** Reads the registry's audit trail (hot_key_events) for operators: what changed, when, why and by whom. */
export class EventLog {
  readonly #db: Database

  constructor(db: Database) {
    this.#db = db
  }

  /** Events matching the query, newest first. */
  async recent(query: EventQuery = {}): Promise<RegistryChange[]> {
    const limit = Math.min(MAX_EVENTS, Math.max(1, query.limit ?? 50))
    const hash = query.key === undefined ? null : keyHash(query.key)
    const { rows } = await this.#read('list events', () =>
      this.#db.query<EventRow>(SELECT_RECENT_EVENTS, [query.afterVersion ?? 0, hash, limit]),
    )
    return rows.map((row) => ({
      version: Number(row.version),
      key: decodeRawKey(row.raw_key_bytes),
      type: row.type,
      source: row.source,
      actor: row.actor,
      reason: row.reason,
      mitigation: row.mitigation_type,
      splitFactor: row.split_factor,
      ttlSeconds: row.ttl_seconds,
      requestsPerSecond: row.requests_per_second,
      at: row.at.getTime(),
      onsetToMitigationMs: row.onset_at === null ? null : row.at.getTime() - row.onset_at.getTime(),
    }))
  }

  /** Each active key's cluster-wide rate when it was promoted (automatic promotions only). */
  async promotionRates(): Promise<Map<string, number>> {
    const { rows } = await this.#read('read promotion rates', () =>
      this.#db.query<{ raw_key_bytes: Uint8Array; requests_per_second: number | null }>(
        SELECT_PROMOTION_RATES,
      ),
    )
    const rates = new Map<string, number>()
    for (const row of rows) {
      if (row.requests_per_second !== null)
        rates.set(decodeRawKey(row.raw_key_bytes), row.requests_per_second)
    }
    return rates
  }

  async #read<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      throw isConnectionError(error) ? new RegistryUnavailableError(operation, { cause: error }) : error
    }
  }
}
