import { MAX_WATCH_ABORT_KEYS, type WatchAborts } from '@heatsink/protocol'
import { onTheWire } from './report-contents.js'

/**
 * Per key, the transactions aborted by WATCH in the open window (EXEC answered nil), for the window's report.
 * Bounded: past MAX_WATCH_ABORT_KEYS keys in a window, new keys are not counted (a contended key aborts again and
 * again, so it is among the first seen).
 */
export class WatchAbortTally {
  #counts = new Map<string, number>()

  /** One transaction watching `keys` was aborted. */
  record(keys: readonly string[]): void {
    for (const key of keys) {
      const count = this.#counts.get(key)
      if (count !== undefined) this.#counts.set(key, count + 1)
      else if (this.#counts.size < MAX_WATCH_ABORT_KEYS && onTheWire(key)) this.#counts.set(key, 1)
    }
  }

  /** The window's counts, busiest first; the next window starts from none. */
  take(): WatchAborts {
    if (this.#counts.size === 0) return []
    const taken = [...this.#counts].sort((a, b) => b[1] - a[1])
    this.#counts = new Map()
    return taken
  }
}
