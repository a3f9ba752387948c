import type { Clock } from '@heatsink/sketch'

// Stamps are milliseconds x 1024 plus a counter: exact in a double until the year 2248, and up to 1024 writes
// per millisecond before a stamp runs ahead of the clock.
const PER_MS = 1024

/**
 * Write stamps for last-write-wins copies: a hybrid logical clock, so one agent's stamps strictly increase even
 * when its clock stalls or steps back, and stamps of different agents follow their clocks.
 */
export class StampClock {
  readonly #clock: Clock
  #last = 0

  constructor(clock: Clock) {
    this.#clock = clock
  }

  next(): number {
    this.#last = Math.max(Math.floor(this.#clock.now()) * PER_MS, this.#last + 1)
    return this.#last
  }
}
