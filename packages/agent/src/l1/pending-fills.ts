import type { Clock } from '@heatsink/sketch'
import { FillAbandonedError } from '../errors.js'

/**
 * The L1 fills in flight on one tracked connection, each of which the reads of its key wait on. ioredis settles
 * none of them when the connection closes (the tracked connection does not resend unfinished commands: a read
 * resent before tracking is back on would go untracked), and a connection that stalls without closing (a
 * partition, a half-open socket the kernel reports minutes later) never answers. So a fill is abandoned the
 * moment its connection or its redirect is lost, and at the latest `timeoutMs` after it was sent: its waiters
 * then read from Redis as without Heatsink, and its reply, should it still come, reaches nobody and stores nothing.
 */
export class PendingFills {
  readonly #clock: Clock
  readonly #timeoutMs: number
  readonly #abandons = new Set<(reason: string) => void>()

  constructor(clock: Clock, timeoutMs: number) {
    this.#clock = clock
    this.#timeoutMs = timeoutMs
  }

  /** Fills in flight. */
  get size(): number {
    return this.#abandons.size
  }

  /** `fill`'s outcome, or a FillAbandonedError once abandonAll() is called or `timeoutMs` passes without it. */
  watch<T>(key: string, fill: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const done = () => {
        this.#clock.clearTimeout(timer)
        this.#abandons.delete(abandon)
      }
      const abandon = (reason: string) => {
        done()
        reject(new FillAbandonedError(key, reason))
      }
      const timer = this.#clock.setTimeout(
        () => abandon(`no reply within ${this.#timeoutMs} ms`),
        this.#timeoutMs,
      )
      this.#abandons.add(abandon)
      fill.then(
        (value) => {
          done()
          resolve(value)
        },
        (error: unknown) => {
          done()
          reject(error)
        },
      )
    })
  }

  /** Abandons every fill in flight, saying why. */
  abandonAll(reason: string): void {
    for (const abandon of [...this.#abandons]) abandon(reason)
  }
}
