import type { Clock } from '@heatsink/sketch'

interface Draining {
  readonly to: number
  /** Calls draining this layout here (two overlapping reshards of one layout keep it until both end). */
  count: number
  /** Whether this process has closed the layout's gates (under the key's fold lease). */
  closed: boolean
}

/** A reshard of one key from one layout, as registered by beginDrain. */
export interface DrainHandle {
  /** The layout's gates are closed under this process's lease: writes may go to the new layout directly. */
  close(): void
  end(): void
}

/**
 * How this process routes a key's operations while its layout changes:
 *
 * - while a reshard or fold of (key, from -> to) runs here, every operation on the key also reads, and removes
 *   from, layout `from`; and until this process has closed `from`'s gates under the fold lease, writes meant for
 *   `to` go through `from` (its gates send them on once closed). So nothing reaches the new layout, or the base
 *   key, that agents still on `from`, or a merge of `from`, could miss or overwrite;
 * - after a promotion, writes can be held on the base key until every agent has heard of it (activate's
 *   holdWritesUntil), so that an agent still treating the key as unsplit never misses a shard's writes.
 */
export class Transitions {
  readonly #clock: Clock
  readonly #draining = new Map<string, Map<number, Draining>>()
  readonly #holds = new Map<string, { n: number; until: number }>()

  constructor(clock: Clock) {
    this.#clock = clock
  }

  /** Registers a drain of (key, from) towards `to`; synchronous, so it covers operations issued right after. */
  beginDrain(key: string, from: number, to: number): DrainHandle {
    const layouts = this.#draining.get(key) ?? new Map<number, Draining>()
    this.#draining.set(key, layouts)
    const entry = layouts.get(from) ?? { to, count: 0, closed: false }
    entry.count++
    layouts.set(from, entry)
    let ended = false
    return {
      close: () => {
        entry.closed = true
      },
      end: () => {
        if (ended) return
        ended = true
        if (--entry.count > 0) return
        layouts.delete(from)
        if (layouts.size === 0) this.#draining.delete(key)
      },
    }
  }

  /** Split factors of the layouts of `key` being drained here. */
  draining(key: string): Iterable<number> {
    return this.#draining.get(key)?.keys() ?? []
  }

  /** Holds writes for (key, n) on the base key until `until` (clock time). */
  hold(key: string, n: number, until: number): void {
    if (until > this.#clock.now()) this.#holds.set(key, { n, until })
  }

  /** The layout a write for (key, n) should go to now. */
  writeFactor(key: string, n: number): number {
    const hold = this.#holds.get(key)
    if (hold !== undefined) {
      if (hold.until <= this.#clock.now()) this.#holds.delete(key)
      else if (hold.n === n) return 1
    }
    const layouts = this.#draining.get(key)
    if (layouts !== undefined) {
      for (const [from, entry] of layouts) if (entry.to === n && !entry.closed) return from
    }
    return n
  }
}
