import type { WindowCounters } from './window-counters.js'

/**
 * How many windows back the command forms seen on a key are remembered when judging whether it may be split: a
 * counter reset by SET once every few seconds is never split, and a split key demoted for a foreign command is
 * not split again until that many windows pass without one. Windows the counters no longer keep count as empty.
 */
export const FORMS_MEMORY_WINDOWS = 30

/** The command forms reported on a key over the recent windows, from the window counters. */
export class RecentForms {
  readonly #counters: WindowCounters
  readonly #windowMs: number

  constructor(counters: WindowCounters, windowMs: number) {
    this.#counters = counters
    this.#windowMs = windowMs
  }

  /** The forms (CommandForm bits, OR-ed) reported on `key` in the `windows` windows up to the one at `windowStart`. */
  seen(key: string, windowStart: number, windows = FORMS_MEMORY_WINDOWS): Promise<number> {
    const latest = Math.floor(windowStart / this.#windowMs) * this.#windowMs
    const starts = Array.from({ length: windows }, (_, i) => latest - i * this.#windowMs)
    return this.#counters.forms(key, starts)
  }
}
