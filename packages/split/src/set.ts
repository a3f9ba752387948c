import { addFlagged, baseWrite } from './base-write.js'
import { layoutsFor, type SplitContext } from './context.js'
import { call, script } from './fan-out.js'
import { redirectTarget } from './gate.js'
import { randomShard } from './hash.js'
import { readLayers } from './layers.js'

const MAX_HOPS = 4
const CHUNK = 1000

/**
 * Split sets. sadd goes to one random shard, so a member may sit in several shards (and in the base key, which
 * keeps what the set held when it was split); reads answer over the union, and srem removes from every shard of
 * every layout involved, then from the base key.
 */
export class SplitSet {
  readonly #ctx: SplitContext

  constructor(ctx: SplitContext) {
    this.#ctx = ctx
  }

  /** Adds members to one random shard. Resolves to how many were new to that shard (not to the union). */
  async sadd(key: string, n: number, members: readonly string[]): Promise<number> {
    let added = 0
    for (let first = 0; first < members.length; first += CHUNK) {
      added += await this.#saddChunk(key, n, members.slice(first, first + CHUNK))
    }
    return added
  }

  async #saddChunk(key: string, n: number, members: readonly string[]): Promise<number> {
    const ctx = this.#ctx
    let factor = ctx.transitions.writeFactor(key, n)
    for (let hop = 0; hop < MAX_HOPS && factor > 1; hop++) {
      const shard = ctx.layouts.get(key, factor).shards[randomShard(ctx.random, factor)]!
      ctx.shardCounts.hit(key, factor, shard.index)
      const reply = await ctx.fanOut.one(script('saddShard', [shard.data, shard.gate], ...members))
      const target = redirectTarget(reply)
      if (target === undefined) return Number((reply as number[])[1])
      factor = target
    }
    return (await baseWrite(ctx, key, 'sadd', members)) as number
  }

  /** Removes members everywhere: shards first, then the base key. Resolves to how many were in the union. */
  async srem(key: string, n: number, members: readonly string[]): Promise<number> {
    let removed = 0
    for (let first = 0; first < members.length; first += CHUNK) {
      removed += await this.#sremChunk(key, n, [...new Set(members.slice(first, first + CHUNK))])
    }
    return removed
  }

  async #sremChunk(key: string, n: number, members: string[]): Promise<number> {
    const ctx = this.#ctx
    const removed = new Set<string>()
    // Shards before the base key: a fold that merges a shard into the base key after this removal reached the
    // shard sees the removal recorded on the base key (see baseWrite-3.lua), so it cannot bring a member back.
    const { layers } = await readLayers(ctx, layoutsFor(ctx, key, n), {
      shard: (shard) => [script('remShard', [shard.data, shard.gate], 's', ...members)],
      decodeShard: ([reply]) => (reply as number[]).slice(1),
      base: [],
      decodeBase: () => undefined,
    })
    for (const layer of layers) for (const { value } of layer.shards) addFlagged(removed, members, value)
    addFlagged(removed, members, (await baseWrite(ctx, key, 'srem', members)) as number[])
    return removed.size
  }

  /** Every member of the union, each once, in no particular order. */
  async smembers(key: string, n: number): Promise<string[]> {
    const { layers, base } = await readLayers(this.#ctx, layoutsFor(this.#ctx, key, n), {
      shard: (shard) => [call('smembers', shard.data)],
      decodeShard: ([members]) => members as string[],
      base: [call('smembers', key)],
      decodeBase: ([members]) => members as string[],
    })
    const union = new Set(base)
    for (const layer of layers) for (const { value } of layer.shards) for (const m of value) union.add(m)
    return [...union]
  }

  /** Size of the union (members in several shards count once): reads every member. */
  async scard(key: string, n: number): Promise<number> {
    return (await this.smembers(key, n)).length
  }

  /** 1 if any shard or the base key holds the member, else 0. */
  async sismember(key: string, n: number, member: string): Promise<number> {
    const { layers, base } = await readLayers(this.#ctx, layoutsFor(this.#ctx, key, n), {
      shard: (shard) => [call('sismember', shard.data, member)],
      decodeShard: ([flag]) => Number(flag),
      base: [call('sismember', key, member)],
      decodeBase: ([flag]) => Number(flag),
    })
    if (base === 1) return 1
    return layers.some((layer) => layer.shards.some((shard) => shard.value === 1)) ? 1 : 0
  }
}
