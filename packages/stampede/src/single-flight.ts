import type { Clock } from '@heatsink/sketch'
import { CoalesceSlot } from './coalesce-slot.js'
import type { Generations } from './generations.js'

/**
 * At most one flight per key and generation: the first caller starts `work`, callers that arrive while it runs
 * join it. A flight whose generation has been bumped (the key was written or invalidated) is detached: it runs
 * to its end and serves the callers it has, but no later caller joins it, so they start a new flight.
 */
export class SingleFlight<T> {
  readonly #slots = new Map<string, CoalesceSlot<T>>()
  readonly #generations: Generations
  readonly #clock: Clock
  readonly #onSettle: (slot: CoalesceSlot<T>) => void
  #nextId = 1

  /** `onSettle` sees every flight once, right after its waiters were served. */
  constructor(generations: Generations, clock: Clock, onSettle: (slot: CoalesceSlot<T>) => void = () => {}) {
    this.#generations = generations
    this.#clock = clock
    this.#onSettle = onSettle
  }

  /**
   * The flight `key`'s next caller would join, if any: not one whose callers all aborted, which will end with
   * their reason, not a value.
   */
  current(key: string): CoalesceSlot<T> | undefined {
    const slot = this.#slots.get(key)
    return slot !== undefined &&
      !slot.settled &&
      !slot.abandoned &&
      this.#generations.isCurrent(key, slot.ticket)
      ? slot
      : undefined
  }

  /**
   * Joins the current flight for `key`, or starts one running `work(slot)`. Resolves to the flight's result,
   * or to `onTimeout(waitedMs, slot)` if `maxWaitMs` passes first; rejects with `signal`'s reason when it fires
   * first (see CoalesceSlot for what that does to the work). A caller whose signal has already fired starts and
   * joins nothing.
   */
  run(
    key: string,
    maxWaitMs: number,
    onTimeout: (waitedMs: number, slot: CoalesceSlot<T>) => T,
    work: (slot: CoalesceSlot<T>) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    let slot = this.current(key)
    if (slot === undefined) {
      const started = new CoalesceSlot<T>(key, this.#nextId++, this.#generations.ticket(), this.#clock)
      slot = started
      this.#slots.set(key, started)
      const promise = started.join(maxWaitMs, (waitedMs) => onTimeout(waitedMs, started), signal)
      new Promise<T>((resolve) => resolve(work(started))).then(
        (value) => this.#settle(started, () => started.resolve(value)),
        (error: unknown) => this.#settle(started, () => started.reject(error)),
      )
      return promise
    }
    const joined = slot
    return joined.join(maxWaitMs, (waitedMs) => onTimeout(waitedMs, joined), signal)
  }

  /** Settles every flight with `error` and fires its work's signal (the guard is closing). */
  rejectAll(error: unknown): void {
    for (const slot of [...this.#slots.values()]) {
      this.#settle(slot, () => slot.reject(error))
      slot.abortWork(error)
    }
  }

  // The slot leaves the map before its waiters hear, so a caller they trigger starts a new flight.
  #settle(slot: CoalesceSlot<T>, settle: () => void): void {
    if (slot.settled) return
    if (this.#slots.get(slot.key) === slot) this.#slots.delete(slot.key)
    settle()
    this.#onSettle(slot)
  }
}
