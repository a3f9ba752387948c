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
   * Exchange rates loaded from a slow rates service with a short TTL and read constantly: without protection, every
   * expiry would send a herd of loads to the service; with getOrLoad it is loaded about once per TTL.
   */
  expiring: { key: 'demo:fx:rates', startSeconds: 18, rpsPerAgent: 1_500, ttlSeconds: 3, loadMs: 50 },
  /**
   * Feature flags the storefront reads the way many apps read a cache: GET, and on a miss load them from the
   * database and SET them with a TTL. Nothing stops a herd here: every reader that misses goes to the database.
   */
  flags: { key: 'demo:config:flags', startSeconds: 0, rpsPerAgent: 200, ttlSeconds: 10, loadMs: 50 },
  /**
   * A flags redeploy: while its instances roll, the deploy hook deletes the cached flags every 50 ms for 3 s, and
   * each delete sends every storefront reader to the database at once: a miss storm, which Heatsink raises once
   * and answers by coalescing the key. It comes back every 60 s, as deploys do.
   */
  redeploy: { startSeconds: 7, forSeconds: 3, deleteEveryMs: 50, everySeconds: 60 },
} as const

/** Whether the flags redeploy is deleting the flags `elapsedSeconds` into the timeline. */
export function redeploying(elapsedSeconds: number): boolean {
  const { startSeconds, forSeconds, everySeconds } = SCENARIO.redeploy
  if (elapsedSeconds < startSeconds) return false
  return (elapsedSeconds - startSeconds) % everySeconds < forSeconds
}

/** Cluster-wide requests per second at which the quickstart's control plane calls a key hot. */
export const QUICKSTART_HOT_RPS = 3_000

/** The background's key names: the same in every process. */
export function backgroundKey(i: number): string {
  return `demo:product:${i}`
}
