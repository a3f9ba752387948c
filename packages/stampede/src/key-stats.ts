/** What the guard did for one key since the stats were last taken; the agent reports it per window. */
export interface KeyStats {
  /** Loader calls: blocking loads and background refreshes. */
  upstreamLoads: number
  /** The part of upstreamLoads run in the background (stale-while-revalidate, XFetch). */
  backgroundRefreshes: number
  /**
   * Callers served by a load they did not start: the rest of a flight that loaded, and all of a flight that
   * waited for another agent's load. Collapse ratio = (coalescedWaiters + upstreamLoads) / upstreamLoads.
   */
  coalescedWaiters: number
  /** Callers given a stale value: within staleSeconds of expiry, or their fallback after maxWaitMs. */
  staleServes: number
  /** Flights that found another agent's lease and waited for it. */
  leaseWaits: number
  /** Callers that passed maxWaitMs (served their fallback, or a LoadTimeoutError). */
  timeouts: number
}

/** Keys counted per window; the agent reports only hot keys, so a window with more is mostly cold ones. */
const MAX_KEYS_PER_WINDOW = 10_000

function zero(): KeyStats {
  return {
    upstreamLoads: 0,
    backgroundRefreshes: 0,
    coalescedWaiters: 0,
    staleServes: 0,
    leaseWaits: 0,
    timeouts: 0,
  }
}

/**
 * Per-key counters for the current window. Bounded: once a window has counted MAX_KEYS_PER_WINDOW keys,
 * further keys count into a scratch record nobody reads, so a guard whose stats are never taken cannot grow.
 */
export class StatsBook {
  #byKey = new Map<string, KeyStats>()
  readonly #overflow = zero()
  /** The windows already taken, summed over keys. */
  readonly #closed = zero()

  /** The counters of `key` in this window, created at zero. */
  for(key: string): KeyStats {
    let stats = this.#byKey.get(key)
    if (stats === undefined) {
      if (this.#byKey.size >= MAX_KEYS_PER_WINDOW) return this.#overflow
      stats = zero()
      this.#byKey.set(key, stats)
    }
    return stats
  }

  /** A copy of `key`'s counters in this window, or undefined when the guard has not seen it. */
  peek(key: string): KeyStats | undefined {
    const stats = this.#byKey.get(key)
    return stats === undefined ? undefined : { ...stats }
  }

  /** Every key's counters for the window now ending; the next window starts at zero. */
  take(): Map<string, KeyStats> {
    const taken = this.#byKey
    this.#byKey = new Map()
    for (const stats of taken.values()) add(this.#closed, stats)
    return taken
  }

  /** Every counter summed over all keys and windows, the current one included. */
  totals(): KeyStats {
    const totals = { ...this.#closed }
    add(totals, this.#overflow)
    for (const stats of this.#byKey.values()) add(totals, stats)
    return totals
  }
}

function add(into: KeyStats, stats: KeyStats): void {
  into.upstreamLoads += stats.upstreamLoads
  into.backgroundRefreshes += stats.backgroundRefreshes
  into.coalescedWaiters += stats.coalescedWaiters
  into.staleServes += stats.staleServes
  into.leaseWaits += stats.leaseWaits
  into.timeouts += stats.timeouts
}
