import {
  keyHash,
  type RegistryEntry,
  type RegistryEventInput,
  type RegistrySnapshot,
  WIRE_VERSION,
} from '@heatsink/protocol'
import type { Logger } from 'pino'
import { type Clock, systemClock } from '../clock.js'
import { isConnectionError } from '../db/connection-errors.js'
import type { Database, Queryable } from '../db/database.js'
import type { ChangeLogger, RegistryPort } from '../detection/registry-port.js'
import { KeyHashCollisionError, RegistryUnavailableError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import {
  type CheckedPromote,
  checkKey,
  checkPromote,
  checkRate,
  type PromoteInput,
} from './registry-input.js'
import { type RegistryRecord, toEntry } from './registry-record.js'
import { RegistryStore } from './registry-store.js'

/** What promote() did. */
export interface PromoteResult {
  entry: RegistryEntry
  /** A promote event: the key was not active (new, or demoted before). */
  created: boolean
  /** An event was recorded: created, or an update of an active entry. */
  changed: boolean
}

/** What demote() is told. */
export interface DemoteOptions {
  actor: string
  reason: string
  requestsPerSecond?: number | null
  /** Demote only an entry with this source: the detector's hysteresis never demotes a manual promotion. */
  onlySource?: 'auto'
  /** Where the demotion is logged (an API request's logger, for its request id); default: the registry's. */
  log?: ChangeLogger
}

/** Options of RegistryService. */
export interface RegistryServiceOptions {
  readonly clock?: Clock
  readonly log?: Logger
  readonly metrics?: Metrics
  /** Runs after every committed change (the publisher's flush); a failure is logged, the change stands. */
  readonly afterCommit?: () => Promise<unknown>
}

const EXPIRY_ACTOR = 'ttl'

/**
 * The HotKeyRegistry: promotions and demotions in Postgres. Every change is one transaction that takes the next
 * registry version, writes the key's row and appends the event to hot_key_events, from which the publisher
 * broadcasts it. Connection failures surface as RegistryUnavailableError, with nothing half-applied.
 */
export class RegistryService implements RegistryPort {
  readonly #db: Database
  readonly #store = new RegistryStore()
  readonly #clock: Clock
  readonly #log: Logger | undefined
  readonly #metrics: Metrics | undefined
  readonly #afterCommit: (() => Promise<unknown>) | undefined

  constructor(db: Database, options: RegistryServiceOptions = {}) {
    this.#db = db
    this.#clock = options.clock ?? systemClock
    this.#log = options.log
    this.#metrics = options.metrics
    this.#afterCommit = options.afterCommit
  }

  /**
   * Promotes a key. A key not active gets a promote event; a manual promotion of an active key gets an update
   * event if anything differs (a ttl always renews the expiry); an automatic one never overrides what is there.
   */
  async promote(input: PromoteInput): Promise<PromoteResult> {
    const wanted = checkPromote(input)
    const hash = keyHash(wanted.key)
    // The detector re-promotes keys that stay hot; those change nothing, so they skip the registry lock.
    if (wanted.source === 'auto') {
      const current = await this.#read('promote', () => this.#store.find(this.#db, hash))
      if (current?.status === 'active' && current.key === wanted.key) {
        return { entry: toEntry(current), created: false, changed: false }
      }
    }
    const result = await this.#write('promote', (tx) => this.#promoteIn(tx, wanted, hash))
    if (result.changed) {
      const type = result.created ? 'promote' : 'update'
      const log = input.log ?? this.#log
      log?.info({ key: wanted.key, version: result.entry.version, source: wanted.source, type }, 'promoted')
      await this.#published(log)
    }
    return result
  }

  /** Demotes an active key; false when it is not active, or its source is not `onlySource`. */
  async demote(key: string, options: DemoteOptions): Promise<boolean> {
    return this.#demote(
      checkKey(key),
      options,
      (record) => options.onlySource === undefined || record.source === options.onlySource,
    )
  }

  /** Every active entry, oldest promotion first. */
  async list(): Promise<RegistryEntry[]> {
    const records = await this.#read('list', () => this.#store.active(this.#db))
    return records.map(toEntry)
  }

  /** The key's active entry, if it has one. */
  async get(key: string): Promise<RegistryEntry | undefined> {
    const record = await this.#find('get', key)
    return record?.status === 'active' ? toEntry(record) : undefined
  }

  /** Whether the key was ever in the registry, active or demoted. */
  async known(key: string): Promise<boolean> {
    return (await this.#find('known', key)) !== undefined
  }

  /** Every active entry and the registry version they belong to, read from one consistent snapshot. */
  async snapshot(): Promise<RegistrySnapshot> {
    const stored = await this.#read('snapshot', () => this.#store.snapshot(this.#db))
    const at = this.#clock.now()
    return {
      v: WIRE_VERSION,
      kind: 'snapshot',
      version: stored.version,
      at,
      entries: stored.records.map(toEntry),
    }
  }

  /** Demotes every active entry whose expiry is at or before `now` (reason 'ttl expired'); returns how many. */
  async expireDue(now: number): Promise<number> {
    const keys = await this.#read('expire', () => this.#store.expiredKeys(this.#db, now))
    let expired = 0
    for (const key of keys) {
      // Checked again under the lock: a renewal may have landed since the keys were read.
      const due = (record: RegistryRecord) => record.expiresAt !== null && record.expiresAt <= now
      if (await this.#demote(key, { actor: EXPIRY_ACTOR, reason: 'ttl expired' }, due)) expired++
    }
    return expired
  }

  async #promoteIn(tx: Queryable, wanted: CheckedPromote, hash: string): Promise<PromoteResult> {
    await this.#store.lockForChange(tx)
    const current = await this.#store.find(tx, hash)
    if (current !== undefined && current.key !== wanted.key) {
      throw new KeyHashCollisionError(wanted.key, hash, current.key)
    }
    const now = this.#clock.now()
    const expiresAt = wanted.ttlSeconds === null ? null : now + wanted.ttlSeconds * 1000
    const active = current?.status === 'active' ? current : undefined
    if (active !== undefined && (wanted.source === 'auto' || !differs(active, wanted))) {
      return { entry: toEntry(active), created: false, changed: false }
    }

    const version = await this.#store.nextVersion(tx)
    const record: RegistryRecord = {
      key: wanted.key,
      keyHash: hash,
      detectedAt: active?.detectedAt ?? now,
      mitigation: wanted.mitigation,
      splitFactor: wanted.splitFactor,
      ttlSeconds: wanted.ttlSeconds,
      status: 'active',
      source: wanted.source,
      version,
      updatedAt: now,
      expiresAt,
      requestsPerSecond: wanted.requestsPerSecond ?? active?.requestsPerSecond ?? null,
    }
    const entry = toEntry(record)
    const type = active === undefined ? 'promote' : 'update'
    const event: RegistryEventInput = { v: WIRE_VERSION, kind: 'registry', type, version, at: now, entry }
    await this.#store.save(tx, record)
    await this.#store.append(tx, {
      event,
      record,
      actor: wanted.actor,
      reason: wanted.reason,
      requestsPerSecond: wanted.requestsPerSecond,
      onsetAt: type === 'promote' ? wanted.onsetAt : null,
    })
    return { entry, created: active === undefined, changed: true }
  }

  async #demote(
    key: string,
    options: DemoteOptions,
    eligible: (record: RegistryRecord) => boolean,
  ): Promise<boolean> {
    const requestsPerSecond = checkRate(options.requestsPerSecond)
    const hash = keyHash(key)
    const demoted = await this.#write('demote', async (tx) => {
      await this.#store.lockForChange(tx)
      const current = await this.#store.find(tx, hash)
      if (current?.status !== 'active' || current.key !== key || !eligible(current)) return undefined
      const now = this.#clock.now()
      const version = await this.#store.nextVersion(tx)
      const record: RegistryRecord = {
        ...current,
        status: 'demoted',
        version,
        updatedAt: now,
        expiresAt: null,
        requestsPerSecond: requestsPerSecond ?? current.requestsPerSecond,
      }
      const event: RegistryEventInput = {
        v: WIRE_VERSION,
        kind: 'registry',
        type: 'demote',
        version,
        at: now,
        key,
        keyHash: hash,
        reason: options.reason,
      }
      await this.#store.save(tx, record)
      await this.#store.append(tx, {
        event,
        record,
        actor: options.actor,
        reason: options.reason,
        requestsPerSecond,
        onsetAt: null,
      })
      return record
    })
    if (demoted === undefined) return false
    const log = options.log ?? this.#log
    log?.info({ key, version: demoted.version, actor: options.actor, reason: options.reason }, 'demoted')
    await this.#published(log)
    return true
  }

  async #find(operation: string, key: string): Promise<RegistryRecord | undefined> {
    const record = await this.#read(operation, () => this.#store.find(this.#db, keyHash(checkKey(key))))
    return record?.key === key ? record : undefined
  }

  // `log` is the change's logger, so a failure after an API call is logged with its request id.
  async #published(log: ChangeLogger | undefined): Promise<void> {
    if (this.#afterCommit === undefined) return
    try {
      await this.#afterCommit()
    } catch (error) {
      // Committed is committed: the outbox keeps the event, and the publisher's next flush sends it.
      log?.warn({ err: error }, 'publishing a registry change failed; it will be retried')
    }
  }

  async #read<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      throw unavailable(operation, error)
    }
  }

  async #write<T>(operation: string, run: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.#db.transaction(run)
    } catch (error) {
      this.#metrics?.registryWriteFailures.inc()
      throw unavailable(operation, error)
    }
  }
}

// A manual promotion changes an active entry when its settings differ, when it takes over an automatic entry
// (so hysteresis leaves it alone), or when it carries a ttl (which moves the expiry).
function differs(current: RegistryRecord, wanted: CheckedPromote): boolean {
  return (
    current.mitigation !== wanted.mitigation ||
    current.splitFactor !== wanted.splitFactor ||
    current.source !== wanted.source ||
    current.ttlSeconds !== wanted.ttlSeconds ||
    wanted.ttlSeconds !== null
  )
}

function unavailable(operation: string, error: unknown): unknown {
  return isConnectionError(error) ? new RegistryUnavailableError(operation, { cause: error }) : error
}
