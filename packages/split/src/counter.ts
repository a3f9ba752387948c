import { redisClusterSlot } from '@heatsink/protocol'
import { layoutsFor, type SplitContext } from './context.js'
import { type CounterView, ExactSum, sumOf } from './counter-sum.js'
import { NotAnIntegerError, throwScriptFailure } from './errors.js'
import { call, callAt, type RedisCall, script } from './fan-out.js'
import { decodeGate, redirectTarget } from './gate.js'
import { randomShard } from './hash.js'
import { hasUnfinishedMove, parseJournal } from './journal.js'
import { readLayers } from './layers.js'
import type { SplitLayout } from './layout.js'
import { routesLeaveLayouts } from './routes.js'

// Each hop follows a closed gate to a newer layout; past this, the base key takes the write (always correct).
const MAX_HOPS = 4
// A snapshot read's answer that only a read of the gates can sum this counter right now.
const NEEDS_GATES = Symbol('needs gates')

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
   * On a standalone Redis, INCRBY `delta` ('': none, a read with the gates) as one command sent before this call
   * returns: calls made one after another run in Redis in that order, each answered with the sum right after its
   * own write. Resolves to the sum (null: nothing exists), like read().
   */
  inOrder(key: string, n: number, delta: string): Promise<bigint | null> {
    const ctx = this.#ctx
    const layouts = layoutsFor(ctx, key, n)
    const keys = gatedKeys(ctx, key, layouts)
    for (const layout of layouts) ctx.shardCounts.hitAll(key, layout.n)
    const factor = delta === '' ? 1 : ctx.transitions.writeFactor(key, n)
    let written: readonly string[] = [key, key]
    if (factor > 1) {
      const shard = ctx.layouts.get(key, factor).shards[randomShard(ctx.random, factor)]!
      ctx.shardCounts.hit(key, factor, shard.index)
      written = [shard.data, shard.gate]
    }
    const sent = ctx.fanOut.one(script('incrAndRead', [...written, ...keys], delta, factor > 1 ? '0' : '1'))
    return sent.then((reply) => {
      throwScriptFailure('incrAndRead', reply, { key, physicalKey: written[0]! })
      return this.#sumRead(key, layouts, reply as Array<string | null>, keys.length)
    })
  }

  /**
   * On a standalone Redis, the snapshot read (one MGET, sent before this call returns, so in order with inOrder's
   * commands); undefined when only a read with the gates can sum the counter now (a drain under way).
   */
  snapshotInOrder(key: string, n: number): Promise<bigint | null | undefined> {
    return this.#readSnapshot(key, layoutsFor(this.#ctx, key, n)).then((sum) =>
      sum === NEEDS_GATES ? undefined : sum,
    )
  }

  // incrAndRead's values: base key, journal, routes, then the shards, each with its gate only while a journal or a
  // route exists (`all`: the keys read with the gates). Without them, the sum of base and shards.
  #sumRead(
    key: string,
    layouts: readonly SplitLayout[],
    values: ReadonlyArray<string | null>,
    all: number,
  ): bigint | null | Promise<bigint | null> {
    const journal = values[1] ?? null
    const gated = values.length === all
    if (!gated || (!hasUnfinishedMove(journal) && !routesLeaveLayouts(values[2] ?? null, layouts))) {
      const total = new ExactSum()
      let found = false
      for (let i = 0; i < values.length; i += i < 3 || !gated ? 1 : 2) {
        if (i === 1 || i === 2) continue
        const value = values[i] ?? null
        if (value === null) continue
        found = true
        total.add(key, key, value)
      }
      return found ? total.value() : null
    }
    const view = gatedView(layouts, values, 3)
    // A closed gate sends writes to a layout not read: the per-node read follows it (a later read).
    if (view === undefined) return this.#readPerNode(key, layouts).then((read) => sumOf(key, read))
    return sumOf(key, view)
  }

  /**
   * The counter's value: base key plus every shard of every layout involved, read in parallel. Null when none of
   * them exists. Not an atomic snapshot on a Cluster (increments landing during the read may or may not be
   * counted), but a drain in flight is never counted twice nor missed: see sumOf.
   */
  async read(key: string, n: number): Promise<bigint | null> {
    const layouts = layoutsFor(this.#ctx, key, n)
    if (this.#ctx.fanOut.isCluster) return sumOf(key, await this.#readPerNode(key, layouts))
    const sum = await this.#readSnapshot(key, layouts)
    if (sum !== NEEDS_GATES) return sum
    const view = (await this.#readAtOnce(key, layouts)) ?? (await this.#readPerNode(key, layouts))
    return sumOf(key, view)
  }

  /**
   * The common read on a standalone Redis: base key, journal, routes and every shard in one MGET, no gate. One
   * command is one snapshot, and in a snapshot the gates change the sum in two cases only: a drain has added a
   * shard's value to the base key and not yet deleted the shard (an unfinished journal entry: the value is in
   * both), or a gate of a layout read sends writes to a layout not read (a route out of it, recorded before any
   * such gate closes: routes.ts). A gate recording a finished move never lacks its entry in a snapshot, so sumOf's
   * rule 2 has nothing to add. Otherwise the value is base plus shards; in those two cases, NEEDS_GATES.
   */
  async #readSnapshot(
    key: string,
    layouts: readonly SplitLayout[],
  ): Promise<bigint | null | typeof NEEDS_GATES> {
    const ctx = this.#ctx
    for (const layout of layouts) ctx.shardCounts.hitAll(key, layout.n)
    const keys = snapshotKeys(ctx, key, layouts)
    // The slot is irrelevant on a standalone Redis: no CRC on the hot path.
    const values = (await ctx.fanOut.one(callAt(0, 'mget', ...(keys as [string, ...string[]])))) as Array<
      string | null
    >
    if (hasUnfinishedMove(values[1] ?? null) || routesLeaveLayouts(values[2] ?? null, layouts))
      return NEEDS_GATES
    const total = new ExactSum()
    let found = false
    for (let i = 0; i < values.length; i++) {
      if (i === 1 || i === 2) continue
      const value = values[i] ?? null
      if (value === null) continue
      found = true
      total.add(key, keys[i]!, value)
    }
    return found ? total.value() : null
  }

  /**
   * The read with gates on a standalone Redis: base key, journal, and every shard with its gate in one MGET (one
   * multi-key command costs about 1.3x a GET, a pipeline of one command per shard about 2x). Undefined when a
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
    return gatedView(layouts, values, 2)
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

/**
 * A view from one MGET's values: base key, journal, then from `first` on each shard of `layouts` and its gate.
 * Undefined when a closed gate sends writes to a layout not read, which only the per-node read follows.
 */
function gatedView(
  layouts: readonly SplitLayout[],
  values: ReadonlyArray<string | null | undefined>,
  first: number,
): CounterView | undefined {
  const shards: CounterView['shards'] = []
  let position = first
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

// Per layout, built once: the snapshot read's MGET arguments, the read with gates' (each shard, then its gate),
// and the shards' journal ids.
const snapshotKeyCache = new WeakMap<SplitLayout, readonly string[]>()
const mgetKeyCache = new WeakMap<SplitLayout, readonly string[]>()
const idCache = new WeakMap<SplitLayout, readonly string[]>()

// Base key, journal, routes, then every shard of every layout: positions 1 and 2 are not part of the sum.
function snapshotKeys(ctx: SplitContext, key: string, layouts: readonly SplitLayout[]): readonly string[] {
  const single = layouts.length === 1 ? layouts[0]! : undefined
  let keys = single === undefined ? undefined : snapshotKeyCache.get(single)
  if (keys === undefined) {
    const built = [key, ctx.names.splitJournalKey(key), ctx.names.splitRoutesKey(key)]
    for (const layout of layouts) for (const shard of layout.shards) built.push(shard.data)
    if (single !== undefined) snapshotKeyCache.set(single, built)
    keys = built
  }
  return keys
}

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

const gatedKeyCache = new WeakMap<SplitLayout, readonly string[]>()

// Base key, journal, routes, then every shard of every layout, each followed by its gate.
function gatedKeys(ctx: SplitContext, key: string, layouts: readonly SplitLayout[]): readonly string[] {
  const single = layouts.length === 1 ? layouts[0]! : undefined
  let keys = single === undefined ? undefined : gatedKeyCache.get(single)
  if (keys === undefined) {
    const built = [key, ctx.names.splitJournalKey(key), ctx.names.splitRoutesKey(key)]
    for (const layout of layouts) built.push(...mgetKeys(layout))
    if (single !== undefined) gatedKeyCache.set(single, built)
    keys = built
  }
  return keys
}
