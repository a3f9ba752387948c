/** What the agents do at one moment of the soak, the same in every agent process. */
export interface TrafficMoment {
  /** A key read by every agent at the hot rate, or null between bursts. */
  readonly hotRead: string | null
  /** A counter incremented by every agent at the hot rate (write-hot: split), or null. */
  readonly hotCounter: string | null
}

// A burst is hot for 20 s out of every 40, then left to cool: long enough to be promoted and served from L1
// for a while, and the soak's cooldown (HEATSINK_COOL_SECONDS) demotes it before the next cycle ends.
export const CYCLE_SECONDS = 40
export const HOT_SECONDS = 20

/**
 * Each cycle makes a new key hot, so registry entries, L1 entries, split layouts and per-key statistics are created
 * and retired all through the run: what leaks would leak. Odd cycles also make a counter write-hot.
 */
export function trafficAt(namespace: string, elapsedSeconds: number): TrafficMoment {
  const cycle = Math.floor(elapsedSeconds / CYCLE_SECONDS)
  const hot = elapsedSeconds - cycle * CYCLE_SECONDS < HOT_SECONDS
  return {
    hotRead: hot ? `${namespace}:hot:${cycle}` : null,
    hotCounter: hot && cycle % 2 === 1 ? `${namespace}:hot-counter:${cycle}` : null,
  }
}

/** Background keys: read on a Zipf(1.1) curve, some written, some counted. */
export const BACKGROUND_KEYS = 20_000
/** Of background commands: writes (SET with a TTL) and counter increments; the rest are GETs. */
export const WRITE_SHARE = 0.1
export const INCR_SHARE = 0.05
/** Of each agent's rate, the part spent on the hot key while one is hot. */
export const HOT_SHARE = 0.25
