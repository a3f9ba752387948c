import { randomUUID } from 'node:crypto'
import type { Clock } from '@heatsink/sketch'
import type { Redis } from 'ioredis'
import type { AgentLogger } from './options.js'

/** How often the marker is read: the bound on how long L1 serves a database that SWAPDB replaced. */
export const DATABASE_CHECK_MS = 100

/**
 * Notices SWAPDB, which Redis 7.0 reports to no one (no tracking invalidation, no keyspace event): the database
 * holds a marker key with a random token, read with SET NX GET (planting one when it is missing) on the tracked
 * connection every DATABASE_CHECK_MS. Another token means another database's contents (SWAPDB) or an emptied
 * one (FLUSHDB, FLUSHALL, which tracking reports anyway): `changed` is called and L1 starts over. Reads share
 * the tracked connection with L1's fills, so a fill answered before a check that saw the change is emptied by it.
 */
export class DatabaseMarker {
  readonly #key: string
  readonly #clock: Clock
  readonly #changed: () => void
  readonly #log: AgentLogger
  #seen: string | undefined
  #timer: unknown
  #checking = false

  constructor(key: string, clock: Clock, changed: () => void, log: AgentLogger) {
    this.#key = key
    this.#clock = clock
    this.#changed = changed
    this.#log = log
  }

  /**
   * Reads the token the fills that follow will be checked against (on every tracking redirect). A marker that
   * cannot be read (an ACL without the key) leaves L1 working without SWAPDB detection, and says so.
   */
  async baseline(connection: Redis): Promise<void> {
    try {
      this.#seen = await this.#read(connection)
    } catch (error) {
      this.#seen = undefined
      this.#log.warn(
        { key: this.#key, error: (error as Error).message },
        'database marker unreadable, SWAPDB goes unnoticed',
      )
    }
  }

  /** The connection is gone: the next baseline starts afresh (L1 was emptied with the channel). */
  forget(): void {
    this.#seen = undefined
  }

  /** Checks the marker every DATABASE_CHECK_MS while `connection()` gives a connection to check on. */
  start(connection: () => Redis | undefined): void {
    const tick = () => {
      const live = connection()
      if (live !== undefined && !this.#checking) void this.#check(live)
      this.#timer = this.#clock.setTimeout(tick, DATABASE_CHECK_MS)
    }
    this.#timer = this.#clock.setTimeout(tick, DATABASE_CHECK_MS)
  }

  stop(): void {
    this.#clock.clearTimeout(this.#timer)
  }

  // Without a baseline (the last read failed), a token read now may be a swapped database's: L1 starts over.
  async #check(connection: Redis): Promise<void> {
    const seen = this.#seen
    this.#checking = true
    try {
      const token = await this.#read(connection)
      // A baseline taken meanwhile (a new redirect) is the newer reading.
      if (this.#seen !== seen || token === seen) return
      this.#seen = token
      this.#changed()
    } catch {
      // The connection failed: its loss empties L1 and the next redirect takes a new baseline.
    } finally {
      this.#checking = false
    }
  }

  async #read(connection: Redis): Promise<string> {
    const token = randomUUID()
    const held = (await connection.call('SET', this.#key, token, 'NX', 'GET')) as string | null
    return held ?? token
  }
}
