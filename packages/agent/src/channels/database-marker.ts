import { randomUUID } from 'node:crypto'
import type { Clock } from '@heatsink/sketch'
import type { Redis } from 'ioredis'
import type { AgentLogger } from '../options/agent-options.js'

/** How often the marker is read: the bound on how long L1 serves a database that SWAPDB replaced. */
export const DATABASE_CHECK_MS = 100

// What a replica without a marker reads as the marker's token.
const NO_MARKER = ''

/**
 * Notices SWAPDB, which Redis 7.0 reports to no one (no tracking invalidation, no keyspace event): the database
 * holds a marker key with a random token, read with SET NX GET (planting one when it is missing) on the tracked
 * connection every DATABASE_CHECK_MS. Another token means another database's contents (SWAPDB) or an emptied
 * one (FLUSHDB, FLUSHALL, which tracking reports anyway): `changed` is called and L1 starts over. Reads share
 * the tracked connection with L1's fills, so a fill answered before a check that saw the change is emptied by it.
 * The first reading (the baseline) is sent just before the first fill on each connection: a process that never
 * fills L1 leaves no marker in the application's database.
 */
export class DatabaseMarker {
  readonly #key: string
  readonly #clock: Clock
  readonly #changed: () => void
  readonly #log: AgentLogger
  #seen: string | undefined
  // The baseline in flight, or taken, or failed: until the connection is lost, fills send no other.
  #baseline: Promise<void> | undefined
  #timer: unknown
  #checking = false
  // The tracked connection is on a replica; known again after each reconnect.
  #onReplica = false

  constructor(key: string, clock: Clock, changed: () => void, log: AgentLogger) {
    this.#key = key
    this.#clock = clock
    this.#changed = changed
    this.#log = log
  }

  /**
   * A fill is about to be sent on `connection`: the first one sends the baseline ahead of it, so that what it
   * reads is checked against this database's marker. A marker that cannot be read (an ACL without the key)
   * leaves L1 working without SWAPDB detection, and says so.
   */
  beforeFill(connection: Redis): void {
    this.#baseline ??= this.#read(connection).then(
      (token) => {
        this.#seen = token
      },
      (error: unknown) => {
        this.#log.warn(
          { key: this.#key, error: (error as Error).message },
          'database marker unreadable, SWAPDB goes unnoticed',
        )
      },
    )
  }

  /** The connection is gone, and L1 with it: the next fill takes a new baseline. */
  forget(): void {
    this.#seen = undefined
    this.#baseline = undefined
    this.#onReplica = false
  }

  /** Checks the marker every DATABASE_CHECK_MS while `connection()` gives a connection to check on. */
  start(connection: () => Redis | undefined): void {
    const tick = () => {
      const live = connection()
      if (live !== undefined && this.#seen !== undefined && !this.#checking) void this.#check(live)
      this.#timer = this.#clock.setTimeout(tick, DATABASE_CHECK_MS)
    }
    this.#timer = this.#clock.setTimeout(tick, DATABASE_CHECK_MS)
  }

  stop(): void {
    this.#clock.clearTimeout(this.#timer)
  }

  async #check(connection: Redis): Promise<void> {
    const seen = this.#seen
    this.#checking = true
    try {
      const token = await this.#read(connection)
      // The connection was lost meanwhile: the next baseline is the newer reading.
      if (this.#seen !== seen || token === seen) return
      this.#seen = token
      this.#changed()
    } catch {
      // The connection failed: its loss empties L1 and the next fill takes a new baseline.
    } finally {
      this.#checking = false
    }
  }

  // A replica (L1 filled where a replica-role client reads) takes no SET: it reads the marker the primary's agents
  // planted, which SWAPDB moves there too; while none is planted, SWAPDB goes unnoticed there.
  async #read(connection: Redis): Promise<string> {
    if (this.#onReplica) return (await connection.get(this.#key)) ?? NO_MARKER
    const token = randomUUID()
    try {
      const held = (await connection.call('SET', this.#key, token, 'NX', 'GET')) as string | null
      return held ?? token
    } catch (error) {
      if (!(error as Error).message.startsWith('READONLY')) throw error
      this.#onReplica = true
      return this.#read(connection)
    }
  }
}
