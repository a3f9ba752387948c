import { InvalidSketchOptionError } from './errors.js'
import type { WindowSummary } from './window-recorder.js'

/** One key's count in one window, the unit the sliding sums are made of. */
export interface FrequencyCounter {
  key: string
  windowStart: number
  count: number
}

/**
 * The sliding aggregate over the last W closed windows: per-key sums and rates built from window summaries,
 * so a burst that straddles a window boundary is still seen whole.
 */
export class SlidingFrequency {
  readonly windows: number
  readonly #ring: Array<{ windowStart: number; windowMs: number; counts: Map<string, number> } | undefined>
  #next = 0

  constructor(windows: number) {
    if (!Number.isInteger(windows) || windows < 1) {
      throw new InvalidSketchOptionError('windows', `must be a positive integer, got ${windows}`)
    }
    this.windows = windows
    this.#ring = new Array(windows).fill(undefined)
  }

  /** Adds a closed window, displacing the oldest once W are held. */
  push(summary: WindowSummary): void {
    const counts = new Map<string, number>()
    for (const hitter of summary.hitters) counts.set(hitter.key, hitter.count)
    this.#ring[this.#next] = { windowStart: summary.windowStart, windowMs: summary.windowMs, counts }
    this.#next = (this.#next + 1) % this.windows
  }

  /** The key's summed count over the held windows. */
  count(key: string): number {
    let sum = 0
    for (const window of this.#ring) sum += window?.counts.get(key) ?? 0
    return sum
  }

  /** The key's rate in requests per second over the time the held windows cover. */
  rate(key: string): number {
    const ms = this.#coveredMs()
    return ms === 0 ? 0 : (this.count(key) * 1000) / ms
  }

  /** Every (key, window) count held, oldest window first. */
  entries(): FrequencyCounter[] {
    const out: FrequencyCounter[] = []
    for (const window of this.#ordered()) {
      for (const [key, count] of window.counts) out.push({ key, windowStart: window.windowStart, count })
    }
    return out
  }

  /** Keys by summed count over the held windows, highest first. */
  top(n: number): Array<{ key: string; count: number }> {
    const sums = new Map<string, number>()
    for (const window of this.#ordered()) {
      for (const [key, count] of window.counts) sums.set(key, (sums.get(key) ?? 0) + count)
    }
    return [...sums]
      .map(([key, count]) => ({ key, count }))
      .sort((a, b) => b.count - a.count)
      .slice(0, n)
  }

  #coveredMs(): number {
    let ms = 0
    for (const window of this.#ring) ms += window?.windowMs ?? 0
    return ms
  }

  #ordered() {
    const out = []
    for (let i = 0; i < this.windows; i++) {
      const window = this.#ring[(this.#next + i) % this.windows]
      if (window !== undefined) out.push(window)
    }
    return out
  }
}
