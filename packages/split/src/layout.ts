import { CLUSTER_SLOTS, type HeatsinkNames, redisClusterSlot, slotTag } from '@heatsink/protocol'

/** One physical shard of a split key. */
export interface SplitShard {
  readonly index: number
  /** The Redis Cluster slot the shard (and its gate) lives in. */
  readonly slot: number
  /** The shard's data: a string (counter), set, sorted set, or hash (copy). */
  readonly data: string
  /** The shard's gate: a string in the same slot that, when it says so, closes the shard to writes (gate.ts). */
  readonly gate: string
}

/** Where a split key's `n` shards live. `n` = 1 is the key unsplit: no shards, only the base key. */
export interface SplitLayout {
  readonly key: string
  readonly n: number
  readonly shards: readonly SplitShard[]
}

/**
 * The slot of shard `index` of `n`: the slot space is cut into `n` equal arcs starting at the key's own slot, and
 * each shard takes the middle of its arc. Redis Cluster gives each master one contiguous slot range (the
 * default `--cluster create` split is equal ranges), so shards spaced 16384/n apart fall on the masters in
 * proportion to their ranges: n = 8 on three masters puts 3, 3 and 2 shards on them. The placement is a pure
 * function of (key, n), never of the live topology: agents with different views of the cluster, or a slot
 * migration, can never make two agents disagree about where a shard is.
 */
export function shardSlot(key: string, n: number, index: number): number {
  const offset = Math.floor(((2 * index + 1) * CLUSTER_SLOTS) / (2 * n))
  return (redisClusterSlot(key) + offset) % CLUSTER_SLOTS
}

/** Builds the layout of `key` over `n` shards. */
export function computeLayout(names: HeatsinkNames, key: string, n: number): SplitLayout {
  const shards: SplitShard[] = []
  if (n > 1) {
    for (let index = 0; index < n; index++) {
      const slot = shardSlot(key, n, index)
      const tag = slotTag(slot)
      shards.push(
        Object.freeze({
          index,
          slot,
          data: names.splitShardKey(key, n, index, tag),
          gate: names.splitGateKey(key, n, index, tag),
        }),
      )
    }
  }
  return Object.freeze({ key, n, shards: Object.freeze(shards) })
}

/** Layouts by (key, n), kept so the hot path builds no strings; bounded, oldest dropped first. */
export class LayoutCache {
  readonly #names: HeatsinkNames
  readonly #max: number
  readonly #layouts = new Map<string, SplitLayout>()

  constructor(names: HeatsinkNames, max = 10_000) {
    this.#names = names
    this.#max = max
  }

  get(key: string, n: number): SplitLayout {
    const id = `${n}:${key}`
    let layout = this.#layouts.get(id)
    if (layout === undefined) {
      layout = computeLayout(this.#names, key, n)
      if (this.#layouts.size >= this.#max) {
        const oldest = this.#layouts.keys().next()
        if (!oldest.done) this.#layouts.delete(oldest.value)
      }
      this.#layouts.set(id, layout)
    }
    return layout
  }
}
