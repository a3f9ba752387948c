import { addFlagged, baseWrite } from './base-write.js'
import { layoutsFor, type SplitContext } from './context.js'
import { call, script } from './fan-out.js'
import { redirectTarget } from './gate.js'
import { hashShard } from './hash.js'
import { readLayers } from './layers.js'
import type { SplitLayout } from './layout.js'
import { sortedCard, sortedRange } from './sorted-merge.js'

const MAX_HOPS = 4
const CHUNK = 500

/**
 * Split sorted sets. A member has one home shard per layout, picked by a hash of the member, and zadd writes it
 * there: writes still spread evenly over the shards, and a member's score is always its last ZADD, exactly as on
 * one key (a member written to a random shard each time could keep an older score in another shard, and no rule
 * over several shards' scores can tell an update to a lower score from a stale one). Layers rank newest first:
 * a member in a newer layout hides its entry in an older one or in the base key, which keeps what the set held
 * when it was split. zrem removes from every layout's home shard, then from the base key.
 */
export class SplitSortedSet {
  readonly #ctx: SplitContext

  constructor(ctx: SplitContext) {
    this.#ctx = ctx
  }

  /** ZADD score member [score member ...] (no flags). Resolves to how many members were new to their shard. */
  async zadd(key: string, n: number, scoreMembers: ReadonlyArray<string | number>): Promise<number> {
    if (scoreMembers.length === 0 || scoreMembers.length % 2 !== 0) {
      throw new RangeError('zadd takes score, member pairs')
    }
    const pairs: Array<[string | number, string]> = []
    for (let i = 0; i < scoreMembers.length; i += 2)
      pairs.push([scoreMembers[i]!, String(scoreMembers[i + 1])])
    let added = 0
    for (let first = 0; first < pairs.length; first += CHUNK) {
      const factor = this.#ctx.transitions.writeFactor(key, n)
      added += await this.#zaddAt(key, factor, pairs.slice(first, first + CHUNK), 0)
    }
    return added
  }

  async #zaddAt(
    key: string,
    factor: number,
    pairs: Array<[string | number, string]>,
    hop: number,
  ): Promise<number> {
    const ctx = this.#ctx
    if (factor <= 1 || hop >= MAX_HOPS) return (await baseWrite(ctx, key, 'zadd', pairs.flat())) as number
    const layout = ctx.layouts.get(key, factor)
    const groups = byHomeShard(layout, pairs, (pair) => pair[1])
    const entries = [...groups]
    const replies = await ctx.fanOut.all(
      entries.map(([index, group]) => {
        const shard = layout.shards[index]!
        ctx.shardCounts.hit(key, factor, index)
        return script('zaddShard', [shard.data, shard.gate], ...group.flat())
      }),
    )
    let added = 0
    const redirected = new Map<number, Array<[string | number, string]>>()
    replies.forEach((reply, i) => {
      const target = redirectTarget(reply)
      if (target === undefined) added += Number((reply as number[])[1])
      else redirected.set(target, [...(redirected.get(target) ?? []), ...entries[i]![1]])
    })
    const more = await Promise.all(
      [...redirected].map(([target, group]) => this.#zaddAt(key, target, group, hop + 1)),
    )
    return added + more.reduce((sum, count) => sum + count, 0)
  }

  /** Removes members from their home shard in every layout, then from the base key. Resolves to how many were present. */
  async zrem(key: string, n: number, members: readonly string[]): Promise<number> {
    const ctx = this.#ctx
    let removedCount = 0
    for (let first = 0; first < members.length; first += CHUNK) {
      const chunk = [...new Set(members.slice(first, first + CHUNK))]
      const removed = new Set<string>()
      const homes = new Map<number, Map<number, string[]>>()
      const home = (layout: SplitLayout) => {
        const groups = homes.get(layout.n) ?? byHomeShard(layout, chunk, (m) => m)
        homes.set(layout.n, groups)
        return groups
      }
      const { layers } = await readLayers(ctx, layoutsFor(ctx, key, n), {
        shard: (shard, layout) => {
          const mine = home(layout).get(shard.index)
          return mine === undefined ? undefined : [script('remShard', [shard.data, shard.gate], 'z', ...mine)]
        },
        decodeShard: ([reply], shard, layout) => {
          const mine = home(layout).get(shard.index)!
          return mine.filter((_, i) => (reply as number[])[i + 1] === 1)
        },
        base: [],
        decodeBase: () => undefined,
      })
      for (const layer of layers) for (const { value } of layer.shards) for (const m of value) removed.add(m)
      addFlagged(removed, chunk, (await baseWrite(ctx, key, 'zrem', chunk)) as number[])
      removedCount += removed.size
    }
    return removedCount
  }

  /** The member's score in the newest layer that holds it, or null. */
  async zscore(key: string, n: number, member: string): Promise<string | null> {
    const { layers, base } = await readLayers(this.#ctx, layoutsFor(this.#ctx, key, n), {
      shard: (shard, layout) =>
        hashShard(member, layout.n) === shard.index ? [call('zscore', shard.data, member)] : undefined,
      decodeShard: ([score]) => score as string | null,
      base: [call('zscore', key, member)],
      decodeBase: ([score]) => score as string | null,
    })
    for (const layer of layers) for (const { value } of layer.shards) if (value !== null) return value
    return base
  }

  /** Number of distinct members. */
  zcard(key: string, n: number): Promise<number> {
    return sortedCard(this.#ctx, key, layoutsFor(this.#ctx, key, n))
  }

  /** ZRANGE start stop [WITHSCORES] by rank, merged over every layer. */
  async zrange(key: string, n: number, start: number, stop: number, withScores: boolean): Promise<string[]> {
    return flatten(
      await sortedRange(this.#ctx, key, layoutsFor(this.#ctx, key, n), start, stop, false),
      withScores,
    )
  }

  /** ZREVRANGE start stop [WITHSCORES] by rank, merged over every layer. */
  async zrevrange(
    key: string,
    n: number,
    start: number,
    stop: number,
    withScores: boolean,
  ): Promise<string[]> {
    return flatten(
      await sortedRange(this.#ctx, key, layoutsFor(this.#ctx, key, n), start, stop, true),
      withScores,
    )
  }
}

function byHomeShard<T>(
  layout: SplitLayout,
  items: readonly T[],
  member: (item: T) => string,
): Map<number, T[]> {
  const groups = new Map<number, T[]>()
  for (const item of items) {
    const index = hashShard(member(item), layout.n)
    const group = groups.get(index)
    if (group === undefined) groups.set(index, [item])
    else group.push(item)
  }
  return groups
}

function flatten(entries: ReadonlyArray<{ member: string; score: string }>, withScores: boolean): string[] {
  if (!withScores) return entries.map((entry) => entry.member)
  return entries.flatMap((entry) => [entry.member, entry.score])
}
