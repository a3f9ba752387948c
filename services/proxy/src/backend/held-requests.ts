import { BackendLostError } from '../errors.js'
import type { ReplySink } from './reply-sink.js'

/**
 * How long a request waits for a Sentinel-managed primary to answer again: beyond a `kill -9` failover (Sentinel's
 * down-after-milliseconds, its election, and the proxy's search, about 2-3 s with the defaults of the tests).
 */
export const HOLD_MS = 5000

interface Held {
  readonly send: () => void
  readonly sink: ReplySink
  readonly timer: NodeJS.Timeout
}

/**
 * Requests for shared connections that arrive while a Sentinel backend has no primary that answers (a failover in
 * progress): kept in arrival order and sent once one answers, as ioredis keeps a command in its offline queue
 * until it has reconnected to the new primary, so that a failover costs a plain client of the proxy a delay, not
 * an error. A request still waiting after HOLD_MS fails as a lost connection's would.
 */
export class HeldRequests {
  readonly #held: Held[] = []
  readonly #holdMs: number

  constructor(holdMs = HOLD_MS) {
    this.#holdMs = holdMs
  }

  get size(): number {
    return this.#held.length
  }

  /** Keeps a request until release(); `send` sends it then. */
  hold(sink: ReplySink, send: () => void): void {
    const timer = setTimeout(() => this.#expire(held), this.#holdMs)
    const held: Held = { send, sink, timer }
    this.#held.push(held)
  }

  /** A primary answers: every request kept is sent, in the order they came. */
  release(): void {
    for (let held = this.#held.shift(); held !== undefined; held = this.#held.shift()) {
      clearTimeout(held.timer)
      held.send()
    }
  }

  /** Fails every request kept (the proxy is closing). */
  failAll(error: Error): void {
    for (let held = this.#held.shift(); held !== undefined; held = this.#held.shift()) {
      clearTimeout(held.timer)
      held.sink.fail(error)
    }
  }

  #expire(held: Held): void {
    const index = this.#held.indexOf(held)
    if (index < 0) return
    this.#held.splice(index, 1)
    held.sink.fail(
      new BackendLostError(
        `ERR heatsink proxy: connection to redis lost (no primary answered within ${this.#holdMs} ms)`,
      ),
    )
  }
}
