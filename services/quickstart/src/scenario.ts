/**
 * The quickstart's traffic, one timeline shared by every agent process and by the live view, so the view can
 * tell when each hot key began and measure how long detection took.
 */
export const SCENARIO = {
  /** Zipf(1.1) background over this many keys, per agent. */
  backgroundKeys: 10_000,
  backgroundRps: 3_000,
  /** A post that goes viral: read-mostly, so it should be served from the agents' L1 caches. */
  viral: { key: 'demo:post:42', startSeconds: 5, rpsPerAgent: 2_000 },
  /**
   * A celebrity's profile read by a service that is not on Node at all (a plain client, no Heatsink code) through
   * the Heatsink proxy: the proxy counts, reports and then answers it from its own L1.
   */
  proxied: { key: 'demo:profile:celebrity', startSeconds: 3, rps: 4_000 },
  /** Its like counter, incremented by every reader: write-hot, so it should be split over shards. */
  counter: { key: 'demo:likes:post:42', startSeconds: 12, rpsPerAgent: 1_500 },
  /**
   * A config blob loaded from a slow "database" with a short TTL and read constantly: without protection, every
   * expiry would send a herd of loads to the database; with getOrLoad it is loaded about once per TTL.
   */
  expiring: { key: 'demo:config:flags', startSeconds: 18, rpsPerAgent: 1_500, ttlSeconds: 3, loadMs: 50 },
} as const

/** Cluster-wide requests per second at which the quickstart's control plane calls a key hot. */
export const QUICKSTART_HOT_RPS = 3_000

/** The background's key names: the same in every process. */
export function backgroundKey(i: number): string {
  return `demo:product:${i}`
}
