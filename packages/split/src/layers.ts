import type { SplitContext } from './context.js'
import { callAt, type RedisCall } from './fan-out.js'
import { decodeGate, type GateState, readGate } from './gate.js'
import type { SplitLayout, SplitShard } from './layout.js'

/** One shard as a layered read saw it. */
export interface ShardRead<T> {
  readonly shard: SplitShard
  readonly gate: GateState
  readonly value: T
}

/** One layout as a layered read saw it: the shards the query asked about. */
export interface LayerRead<T> {
  readonly layout: SplitLayout
  readonly shards: Array<ShardRead<T>>
}

/** What to read from each shard and from the base key. */
export interface LayeredQuery<T, B> {
  /**
   * The shard holds a string (a counter): read it with its gate in one MGET (same slot), and hand decodeShard
   * just the value. `shard` is then only asked whether to read the shard (an empty array: yes).
   */
  readonly stringShards?: true
  /** Commands for one shard (run after its gate is read, in the same round trip); undefined skips the shard. */
  shard(shard: SplitShard, layout: SplitLayout): RedisCall[] | undefined
  decodeShard(replies: unknown[], shard: SplitShard, layout: SplitLayout): T
  /** Commands on the base key (and its same-slot helpers), sent in the first round trip. */
  readonly base: RedisCall[]
  decodeBase(replies: unknown[]): B
}

// A closed gate can point at a layout that is itself being resharded; a few hops cover any real sequence.
const MAX_ROUNDS = 4

/**
 * Reads the base key and the shards of every layout in `layouts` in one round trip per node, then follows the
 * gates: a closed gate names the layout its writes now go to, and a layout not yet read is read in a further
 * round (so an agent whose registry view lags still sees what newer agents wrote). Layers come back newest
 * first: a layout a gate points to ranks above the layout holding the gate.
 */
export async function readLayers<T, B>(
  ctx: SplitContext,
  layouts: readonly SplitLayout[],
  query: LayeredQuery<T, B>,
): Promise<{ layers: Array<LayerRead<T>>; base: B }> {
  const layers: Array<LayerRead<T>> = []
  const seen = new Set<number>(layouts.map((layout) => layout.n))
  let pending: Array<{ layout: SplitLayout; before: LayerRead<T> | undefined }> = layouts.map((layout) => ({
    layout,
    before: undefined,
  }))
  let base: B | undefined
  for (let round = 0; round < MAX_ROUNDS && (pending.length > 0 || base === undefined); round++) {
    const calls: RedisCall[] = round === 0 ? query.base.slice() : []
    const plans: Array<{ layer: LayerRead<T>; shard: SplitShard; first: number; count: number }> = []
    const fresh: Array<{ layer: LayerRead<T>; before: LayerRead<T> | undefined }> = []
    for (const { layout, before } of pending) {
      const layer: LayerRead<T> = { layout, shards: [] }
      fresh.push({ layer, before })
      for (const shard of layout.shards) {
        const commands = query.shard(shard, layout)
        if (commands === undefined) continue
        ctx.shardCounts.hit(layout.key, layout.n, shard.index)
        if (query.stringShards) {
          plans.push({ layer, shard, first: calls.length, count: 0 })
          calls.push(callAt(shard.slot, 'mget', shard.gate, shard.data))
        } else {
          plans.push({ layer, shard, first: calls.length, count: commands.length })
          calls.push(readGate(shard), ...commands)
        }
      }
    }
    const replies = await ctx.fanOut.all(calls)
    if (round === 0) base = query.decodeBase(replies.slice(0, query.base.length))
    for (const { layer, before } of fresh) {
      const at = before === undefined ? layers.length : layers.indexOf(before)
      layers.splice(at, 0, layer)
    }
    pending = []
    for (const { layer, shard, first, count } of plans) {
      // A string shard's MGET answers [gate, value]; otherwise the gate's reply comes first, then the shard's.
      const pair = query.stringShards ? (replies[first] as unknown[]) : undefined
      const gate = decodeGate(pair !== undefined ? pair[0] : replies[first])
      const shardReplies = pair !== undefined ? [pair[1]] : replies.slice(first + 1, first + 1 + count)
      const value = query.decodeShard(shardReplies, shard, layer.layout)
      layer.shards.push({ shard, gate, value })
      if (gate.state !== undefined && gate.target > 1 && !seen.has(gate.target)) {
        seen.add(gate.target)
        pending.push({ layout: ctx.layouts.get(layer.layout.key, gate.target), before: layer })
      }
    }
  }
  return { layers, base: base as B }
}
