import { redisClusterSlot } from '@heatsink/protocol'
import { layoutsFor, type SplitContext } from './context.js'
import { NotAnIntegerError, throwScriptFailure } from './errors.js'
import { call, callAt, type RedisCall, script } from './fan-out.js'
import { decodeGate, type GateState, redirectTarget } from './gate.js'
import { randomShard } from './hash.js'
import { type JournalEntry, parseJournal } from './journal.js'
import { readLayers } from './layers.js'
import type { SplitLayout } from './layout.js'

const INTEGER = /^-?\d+$/
// Each hop follows a closed gate to a newer layout; past this, the base key takes the write (always correct).
const MAX_HOPS = 4

// What one read of a split counter saw.
interface CounterView {
  readonly base: string | null
  readonly journal: ReadonlyMap<string, JournalEntry>
  /** Every shard read, by `<n>:<index>`, the id its journal entries use. */
  readonly shards: Array<{
    readonly id: string
    readonly data: string
    readonly gate: GateState
    readonly value: string | null
  }>
}

/**
 * Split counters. A delta goes to one shard picked at random; the value is the base key plus every shard. The
 * base key stays part of the sum, so a counter that held a value when it was split keeps it, and any writer
 * may always fall back to the base key.
 */
export class SplitCounter {
  readonly #ctx: SplitContext

  constructor(ctx: SplitContext) {
    this.#ctx = ctx
  }

  /** Adds `delta` to one random shard of the layout (or wherever its closed gate points). */
  async add(key: string, n: number, delta: number | string): Promise<void> {
    const ctx = this.#ctx
    let factor = ctx.transitions.writeFactor(key, n)
    for (let hop = 0; hop < MAX_HOPS && factor > 1; hop++) {
      const layout = ctx.layouts.get(key, factor)
      const shard = layout.shards[randomShard(ctx.random, factor)]!
      ctx.shardCounts.hit(key, factor, shard.index)
      const reply = await ctx.fanOut.one(script('incrShard', [shard.data, shard.gate], delta))
      throwScriptFailure('incrShard', reply, { key, physicalKey: shard.data })
      const target = redirectTarget(reply)
      if (target === undefined) return
      factor = target
    }
    try {
      await ctx.fanOut.one(call('incrby', key, delta))
    } catch (error) {
      if (error instanceof Error && /not an integer/.test(error.message))
        throw new NotAnIntegerError(key, key)
      throw error
    }
  }

  /**
   * The counter's value: base key plus every shard of every layout involved, read in parallel. Null when none of
   * them exists. Not an atomic snapshot (increments landing during the read may or may not be counted), but a
   * drain in flight is never counted twice nor missed: see sumOf.
   */
  async read(key: string, n: number): Promise<bigint | null> {
    const layouts = layoutsFor(this.#ctx, key, n)
    const view = this.#ctx.fanOut.isCluster
      ? await this.#readPerNode(key, layouts)
      : ((await this.#readAtOnce(key, layouts)) ?? (await this.#readPerNode(key, layouts)))
    return sumOf(key, view)
  }

  /**
   * A standalone Redis reads base key, journal, and every shard with its gate in one MGET: measured here, one
   * multi-key command costs about 1.3x a GET, a pipeline of one command per shard about 2x. Undefined when a
   * closed gate points at a layout not read, which the per-node path follows.
   */
  async #readAtOnce(key: string, layouts: readonly SplitLayout[]): Promise<CounterView | undefined> {
    const ctx = this.#ctx
    const keys = [key, ctx.names.splitJournalKey(key)]
    for (const layout of layouts) {
      keys.push(...mgetKeys(layout))
      ctx.shardCounts.hitAll(key, layout.n)
    }
    // The slot is irrelevant on a standalone Redis: no CRC on the hot path.
    const values = (await ctx.fanOut.one(callAt(0, 'mget', ...(keys as [string, ...string[]])))) as Array<
      string | null
    >
    const shards: CounterView['shards'] = []
    let position = 2
    for (const layout of layouts) {
      const ids = shardIds(layout)
      for (const shard of layout.shards) {
        const gate = decodeGate(values[position + 1])
        if (gate.state !== undefined && gate.target > 1 && !layouts.some((read) => read.n === gate.target)) {
          return undefined
        }
        shards.push({ id: ids[shard.index]!, data: shard.data, gate, value: values[position] ?? null })
        position += 2
      }
    }
    return { base: values[0] ?? null, journal: parseJournal(values[1] ?? null), shards }
  }

  // Base key and journal in one MGET on their node, each shard with its gate in one MGET, one batch per node.
  async #readPerNode(key: string, layouts: readonly SplitLayout[]): Promise<CounterView> {
    const ctx = this.#ctx
    const { layers, base } = await readLayers(ctx, layouts, {
      stringShards: true,
      shard: () => [],
      decodeShard: ([value]) => (value ?? null) as string | null,
      base: [baseCall(ctx, key, layouts[0])],
      decodeBase: ([reply]) => reply as [string | null, string | null],
    })
    const shards: CounterView['shards'] = []
    for (const layer of layers) {
      const ids = shardIds(layer.layout)
      for (const { shard, gate, value } of layer.shards) {
        shards.push({ id: ids[shard.index]!, data: shard.data, gate, value })
      }
    }
    return { base: base[0], journal: parseJournal(base[1]), shards }
  }
}

// The MGET of base key and journal, built once per layout: a CRC and a string on every read otherwise.
const baseCallCache = new WeakMap<SplitLayout, RedisCall>()

function baseCall(ctx: SplitContext, key: string, layout: SplitLayout | undefined): RedisCall {
  let request = layout === undefined ? undefined : baseCallCache.get(layout)
  if (request === undefined) {
    request = callAt(redisClusterSlot(key), 'mget', key, ctx.names.splitJournalKey(key))
    if (layout !== undefined) baseCallCache.set(layout, request)
  }
  return request
}

/**
 * Sums a view. Shard and base reads may reach different nodes at different moments, so a drain (seal, add to
 * the base key, delete the shard) can fall between them; the journal and the gates say which side each read saw:
 *
 * 1. A journal entry is a move already added to the base key. If the read saw its shard before that drain
 *    finished (an older seq, or the same seq still sealed), the value was counted in the shard too: take it out.
 * 2. A gate recording a finished move whose journal entry the read did not see: the base key was read before
 *    the move was added (entries outlive the gates' records, see journal.ts) and the shard after it was deleted,
 *    so the value was counted nowhere: put it in.
 */
function sumOf(key: string, view: CounterView): bigint | null {
  let found = view.base !== null
  const total = new ExactSum()
  total.add(key, key, view.base)
  let moves = view.journal.size > 0
  for (const shard of view.shards) {
    if (shard.value !== null) found = true
    total.add(key, shard.data, shard.value)
    if (shard.gate.moved !== undefined) moves = true
  }
  let sum = total.value()
  // The steady state: no drain recorded anywhere, nothing to correct.
  if (!moves) return found ? sum : null
  const gates = new Map<string, GateState>()
  for (const shard of view.shards) gates.set(shard.id, shard.gate)
  for (const [field, entry] of view.journal) {
    const cut = field.lastIndexOf(':')
    const gate = gates.get(field.slice(0, cut))
    if (gate === undefined) continue
    const seq = Number(field.slice(cut + 1))
    if (seq > gate.seq || (seq === gate.seq && gate.state === 'sealed')) sum -= entry.amount
  }
  for (const [id, gate] of gates) {
    if (gate.moved !== undefined && !view.journal.has(`${id}:${gate.moved.seq}`)) sum += gate.moved.amount
  }
  return found ? sum : null
}

// Per layout, built once: the MGET arguments (each shard, then its gate) and the shards' journal ids.
const mgetKeyCache = new WeakMap<SplitLayout, readonly string[]>()
const idCache = new WeakMap<SplitLayout, readonly string[]>()

function mgetKeys(layout: SplitLayout): readonly string[] {
  let keys = mgetKeyCache.get(layout)
  if (keys === undefined) {
    keys = layout.shards.flatMap((shard) => [shard.data, shard.gate])
    mgetKeyCache.set(layout, keys)
  }
  return keys
}

function shardIds(layout: SplitLayout): readonly string[] {
  let ids = idCache.get(layout)
  if (ids === undefined) {
    ids = layout.shards.map((shard) => `${layout.n}:${shard.index}`)
    idCache.set(layout, ids)
  }
  return ids
}

/**
 * A sum of decimal integer replies, exact at any size. Every read of a split counter adds up the base key and
 * each shard; replies of up to 15 digits are added as Numbers while the sum stays a safe integer, because a
 * BigInt made from a string cost more than the rest of the read's own work.
 */
class ExactSum {
  #small = 0
  #big = 0n

  add(key: string, name: string, value: string | null): void {
    if (value === null) return
    if (!INTEGER.test(value)) throw new NotAnIntegerError(key, name)
    if (value.length <= 15) {
      const next = this.#small + Number(value)
      if (Number.isSafeInteger(next)) {
        this.#small = next
        return
      }
    }
    this.#big += BigInt(value)
  }

  value(): bigint {
    return this.#big + BigInt(this.#small)
  }
}
