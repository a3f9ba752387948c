// Keys tracked per window at most; past it new keys are not counted (the agent reports a bounded set anyway).
const MAX_KEYS = 10_000

/**
 * Requests this splitter sent to each shard of each split key since the last take: what the agent reports as
 * `HotKeyStats.splitShardCounts` (requests per copy, indexed by copy). A write counts on the shard it landed on, a
 * read on every shard it fanned out to, a copy read on its copy.
 */
export class ShardCounts {
  #counts = new Map<string, { n: number; counts: number[] }>()

  /** Counts one request to shard `index` of (key, n). */
  hit(key: string, n: number, index: number): void {
    const entry = this.#entry(key, n)
    if (entry !== undefined) entry.counts[index] = (entry.counts[index] ?? 0) + 1
  }

  /** Counts one request to every shard of (key, n). */
  hitAll(key: string, n: number): void {
    const entry = this.#entry(key, n)
    if (entry !== undefined) for (let i = 0; i < n; i++) entry.counts[i] = (entry.counts[i] ?? 0) + 1
  }

  /** The counts since the last take, per key, and a fresh start. */
  take(): Map<string, number[]> {
    const taken = new Map<string, number[]>()
    for (const [key, { counts }] of this.#counts) taken.set(key, counts)
    this.#counts = new Map()
    return taken
  }

  #entry(key: string, n: number): { n: number; counts: number[] } | undefined {
    if (n <= 1) return undefined
    let entry = this.#counts.get(key)
    if (entry === undefined || entry.n !== n) {
      if (entry === undefined && this.#counts.size >= MAX_KEYS) return undefined
      entry = { n, counts: new Array<number>(n).fill(0) }
      this.#counts.set(key, entry)
    }
    return entry
  }
}
