/** How often the warming keys are read again; in between the last reading is reused. */
export const WARMING_REFRESH_MS = 5000

/** Options of WarmingKeys. */
export interface WarmingKeysOptions {
  readonly counters: { totals(windowStart: number): Promise<Map<string, number>> }
  readonly latestCompleteWindow: () => number
  readonly hotRps: number
  readonly windowMs: number
  readonly now: () => number
}

/**
 * The keys not registered at half the hot threshold or more in the latest complete window (as the dashboard's
 * chart calls a key warming), for the node view. Reading them takes the window's whole counter hashes, every
 * agent's count of every key it reported (50,000 fields with 500 agents reporting 100 keys each), so they are
 * read every WARMING_REFRESH_MS rather than with every sample: a warming key shows on its node a few seconds late.
 */
export class WarmingKeys {
  readonly #options: WarmingKeysOptions
  #rates = new Map<string, number>()
  #readAt = Number.NEGATIVE_INFINITY

  constructor(options: WarmingKeysOptions) {
    this.#options = options
  }

  /** key -> req/s, leaving out the keys registered now. */
  async read(registered: ReadonlySet<string>): Promise<Map<string, number>> {
    const { counters, latestCompleteWindow, hotRps, windowMs, now } = this.#options
    if (now() - this.#readAt >= WARMING_REFRESH_MS) {
      const totals = await counters.totals(latestCompleteWindow())
      const rates = new Map<string, number>()
      for (const [key, count] of totals) {
        const rate = (count * 1000) / windowMs
        if (rate >= hotRps / 2) rates.set(key, rate)
      }
      this.#rates = rates
      this.#readAt = now()
    }
    return new Map([...this.#rates].filter(([key]) => !registered.has(key)))
  }
}
