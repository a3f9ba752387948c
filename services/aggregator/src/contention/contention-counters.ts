import type { HeatsinkNames, WatchAborts } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { counterShard } from '../detection/counter-shard.js'
import { aggregatorScripts } from '../lua/scripts.js'

export interface ContentionCountersOptions {
  names: HeatsinkNames
  /** The window counters' shards and lifetime: the sums live in the same window-shard hashes. */
  shards: number
  retainMs: number
}

/**
 * The cluster-wide transactions aborted by WATCH per key and window, beside the window counters (fields ' x...' of
 * the same hashes, so they expire with them), summed idempotently per agent (applyWatchAborts-1.lua).
 */
export class ContentionCounters {
  readonly #redis: Redis | Cluster
  readonly #options: ContentionCountersOptions

  constructor(redis: Redis | Cluster, options: ContentionCountersOptions) {
    this.#redis = redis
    this.#options = options
  }

  /** Folds one agent's counts for the window starting at windowStart into the sums. */
  async apply(agentId: string, windowStart: number, aborts: WatchAborts): Promise<void> {
    const { names, shards, retainMs } = this.#options
    const byShard = new Map<number, Array<string | number>>()
    for (const [key, count] of aborts) {
      const shard = counterShard(key, shards)
      let pairs = byShard.get(shard)
      if (pairs === undefined) {
        pairs = []
        byShard.set(shard, pairs)
      }
      pairs.push(key, count)
    }
    await Promise.all(
      [...byShard].map(([shard, pairs]) =>
        aggregatorScripts.applyWatchAborts(
          this.#redis,
          names.windowCountersKey(windowStart, shard),
          agentId,
          retainMs,
          pairs,
        ),
      ),
    )
  }

  /** The key's cluster-wide aborted transactions in each of the windows starting at windowStarts (0: none). */
  async perWindow(key: string, windowStarts: readonly number[]): Promise<number[]> {
    const { names, shards } = this.#options
    const shard = counterShard(key, shards)
    const values = await Promise.all(
      windowStarts.map((start) => this.#redis.hget(names.windowCountersKey(start, shard), ` x\n${key}`)),
    )
    return values.map((value) => Number(value ?? 0))
  }
}
