/** Invalidated keys remembered individually; past this, the table is dropped and a floor takes its place. */
const MAX_TRACKED_KEYS = 100_000

/**
 * Per-key generations, the rule that keeps invalidation and in-flight loads apart: take a ticket before
 * reading or loading a key, and fill any cache (L1 or Redis) with the result only while
 * `isCurrent(key, ticket)`. A bump of the key in between (a write, a delete, an invalidation) makes every
 * earlier ticket for it stale, and in-flight work tagged with one is joined by no later caller.
 *
 * A ticket is the global bump count when it was taken, so taking one allocates nothing. Memory stays bounded:
 * when too many keys have been bumped, the table is cleared and every older ticket counts as stale, which
 * only costs a few fills.
 */
export class Generations {
  #sequence = 0
  #floor = 0
  readonly #lastBump = new Map<string, number>()

  /** A ticket for work on any key that starts now. */
  ticket(): number {
    return this.#sequence
  }

  /** True when `key` has not been bumped since `ticket` was taken. */
  isCurrent(key: string, ticket: number): boolean {
    return ticket >= this.#floor && (this.#lastBump.get(key) ?? 0) <= ticket
  }

  /** Makes every ticket taken so far stale, for every key (the owner may have missed invalidations). */
  bumpAll(): void {
    this.#lastBump.clear()
    this.#floor = ++this.#sequence
  }

  /** Makes every ticket taken so far stale for `key`. */
  bump(key: string): void {
    if (this.#lastBump.size >= MAX_TRACKED_KEYS) {
      this.#lastBump.clear()
      this.#floor = ++this.#sequence
    }
    this.#lastBump.set(key, ++this.#sequence)
  }
}
