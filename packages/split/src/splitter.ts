import { type BaseShape, readBaseShape } from './base-shape.js'
import { createContext, type SplitContext, type SplitterOptions } from './context.js'
import { type CopyExpiry, SplitCopies } from './copies.js'
import { SplitCounter } from './counter.js'
import { heldVersion, releaseHold } from './held-fold.js'
import type { SplitLayout } from './layout.js'
import { type ShardPlacement, shardPlacement } from './placement.js'
import { ReadAfterWrite } from './read-after-write.js'
import { Reconciler, type ReconcilerOptions } from './reconciler.js'
import { type ActivateOptions, activate, holdFolded, type ReshardReport, reshard } from './reshard.js'
import { SplitSet } from './set.js'
import { SplitSortedSet } from './sorted-set.js'
import { assertSplitFactor, type SplitFactorOptions, splitFactorFor } from './split-factor.js'

/**
 * The key-splitting engine an agent uses for keys the registry marks `split`. Every method takes the caller's
 * original key and the split factor `n` from the registry (a power of two; 1 means not split), and answers as the
 * matching Redis command would on the original key.
 */
export class Splitter {
  readonly #ctx: SplitContext
  readonly #counter: SplitCounter
  readonly #set: SplitSet
  readonly #sorted: SplitSortedSet
  readonly #copies: SplitCopies
  readonly #afterWrite = new ReadAfterWrite<bigint | null>()

  constructor(options: SplitterOptions) {
    this.#ctx = createContext(options)
    this.#counter = new SplitCounter(this.#ctx)
    this.#set = new SplitSet(this.#ctx)
    this.#sorted = new SplitSortedSet(this.#ctx)
    this.#copies = new SplitCopies(this.#ctx)
  }

  get agentId(): string {
    return this.#ctx.agentId
  }

  /** The `n` physical shards of `key`: names and slots, a pure function of (key, n), cached. */
  layout(key: string, n: number): SplitLayout {
    assertSplitFactor(n)
    return this.#ctx.layouts.get(key, n)
  }

  /** Which node serves each shard of the layout now (Cluster slot map; 'standalone' otherwise). */
  placement(key: string, n: number): ShardPlacement[] {
    return shardPlacement(this.#ctx.redis, this.layout(key, n))
  }

  /**
   * Requests this splitter sent to each shard of each split key since the last call, and a fresh start: the
   * agent's `HotKeyStats.splitShardCounts` (requests per copy, indexed by copy) for its window.
   */
  takeShardCounts(): Map<string, number[]> {
    return this.#ctx.shardCounts.take()
  }

  /** The split factor for a write rate: rate / per-node capacity, up to the next power of two, capped. */
  splitFactorFor(writesPerSecond: number, options: SplitFactorOptions): number {
    return splitFactorFor(writesPerSecond, options)
  }

  // Counters

  /** INCRBY: adds `delta` to one random shard, then resolves to the counter's value read after the write. */
  async incrby(key: string, n: number, delta: number | string): Promise<number> {
    assertSplitFactor(n)
    await this.#counter.add(key, n, delta)
    const sum = await this.#afterWrite.read(`${n}\n${key}`, () => this.#counter.read(key, n))
    return Number(sum ?? 0n)
  }

  incr(key: string, n: number): Promise<number> {
    return this.incrby(key, n, 1)
  }

  decr(key: string, n: number): Promise<number> {
    return this.incrby(key, n, -1)
  }

  decrby(key: string, n: number, delta: number | string): Promise<number> {
    return this.incrby(key, n, typeof delta === 'number' ? -delta : negate(delta))
  }

  /** INCRBY without reading the value back: one command on one shard, for callers that ignore the reply. */
  add(key: string, n: number, delta: number | string): Promise<void> {
    assertSplitFactor(n)
    return this.#counter.add(key, n, delta)
  }

  /**
   * GET of a split counter: the base key plus every shard, read in parallel (one round trip per node), as a
   * decimal string; null when none exists. A sum of reads, not an atomic snapshot.
   */
  async get(key: string, n: number): Promise<string | null> {
    assertSplitFactor(n)
    const sum = await this.#counter.read(key, n)
    return sum === null ? null : sum.toString()
  }

  /**
   * Whether counterInOrder may be used: on a standalone Redis every command goes down one connection, so commands
   * sent one after another run in that order; a Cluster's shards live on several nodes.
   */
  get sendsInOrder(): boolean {
    return !this.#ctx.fanOut.isCluster
  }

  /**
   * INCRBY `delta` on a split counter as one command, sent before this returns: calls made one after another run
   * in Redis in their order, each answered with the value right after its own write (a pipeline of them answers as
   * the unsplit key would). Standalone Redis only (sendsInOrder).
   */
  counterInOrder(key: string, n: number, delta: string): Promise<bigint | null> {
    assertSplitFactor(n)
    return this.#counter.inOrder(key, n, delta)
  }

  /**
   * GET of a split counter as one MGET sent before this returns (in order with counterInOrder's commands);
   * undefined while a drain is under way, when counterGatedRead reads it. Standalone Redis only.
   */
  counterSnapshotInOrder(key: string, n: number): Promise<bigint | null | undefined> {
    assertSplitFactor(n)
    return this.#counter.snapshotInOrder(key, n)
  }

  /** GET of a split counter with the gates, as one command sent before this returns. Standalone Redis only. */
  counterGatedRead(key: string, n: number): Promise<bigint | null> {
    assertSplitFactor(n)
    return this.#counter.inOrder(key, n, '')
  }

  /** The base key's type, expiry and string value: what decides whether a data plane may serve the key split. */
  baseShape(key: string): Promise<BaseShape> {
    return readBaseShape(this.#ctx, key)
  }

  // Sets

  sadd(key: string, n: number, ...members: string[]): Promise<number> {
    assertSplitFactor(n)
    return this.#set.sadd(key, n, members)
  }

  srem(key: string, n: number, ...members: string[]): Promise<number> {
    assertSplitFactor(n)
    return this.#set.srem(key, n, members)
  }

  smembers(key: string, n: number): Promise<string[]> {
    assertSplitFactor(n)
    return this.#set.smembers(key, n)
  }

  scard(key: string, n: number): Promise<number> {
    assertSplitFactor(n)
    return this.#set.scard(key, n)
  }

  sismember(key: string, n: number, member: string): Promise<number> {
    assertSplitFactor(n)
    return this.#set.sismember(key, n, member)
  }

  // Sorted sets

  zadd(key: string, n: number, ...scoreMembers: Array<string | number>): Promise<number> {
    assertSplitFactor(n)
    return this.#sorted.zadd(key, n, scoreMembers)
  }

  zrem(key: string, n: number, ...members: string[]): Promise<number> {
    assertSplitFactor(n)
    return this.#sorted.zrem(key, n, members)
  }

  zscore(key: string, n: number, member: string): Promise<string | null> {
    assertSplitFactor(n)
    return this.#sorted.zscore(key, n, member)
  }

  zcard(key: string, n: number): Promise<number> {
    assertSplitFactor(n)
    return this.#sorted.zcard(key, n)
  }

  zrange(key: string, n: number, start: number, stop: number, withScores?: 'WITHSCORES'): Promise<string[]> {
    assertSplitFactor(n)
    return this.#sorted.zrange(key, n, start, stop, withScores === 'WITHSCORES')
  }

  zrevrange(
    key: string,
    n: number,
    start: number,
    stop: number,
    withScores?: 'WITHSCORES',
  ): Promise<string[]> {
    assertSplitFactor(n)
    return this.#sorted.zrevrange(key, n, start, stop, withScores === 'WITHSCORES')
  }

  // Read-mostly copies

  /** SET on all `n` copies and the base key; expiry as SET's EX/PX. */
  setCopies(key: string, n: number, value: string, ...expiry: CopyExpiry): Promise<'OK'> {
    assertSplitFactor(n)
    return this.#copies.set(key, n, value, expiry)
  }

  /** GET from one copy: hash(routingId) picks it, or chance when no routing id is given. */
  getCopy(key: string, n: number, routingId?: string): Promise<string | null> {
    assertSplitFactor(n)
    return this.#copies.get(key, n, routingId)
  }

  /** DEL on all copies and the base key; resolves to 1 if the key held a value. */
  delCopies(key: string, n: number): Promise<number> {
    assertSplitFactor(n)
    return this.#copies.del(key, n)
  }

  // Lifecycle

  /**
   * Opens layout `n` for writes (reopening gates an earlier fold closed); call on promotion to split, with
   * holdWritesUntil = the promotion's time + the registry's propagation bound.
   */
  activate(key: string, n: number, options?: ActivateOptions): Promise<void> {
    return activate(this.#ctx, key, n, options)
  }

  /** Moves the key from `from` shards to `to` (see reshard.ts); every agent may call it, the first does the work. */
  reshard(key: string, from: number, to: number): Promise<ReshardReport> {
    return reshard(this.#ctx, key, from, to)
  }

  /** Folds every shard of layout `n` back into the original key; call on demotion (it also ends a hold). */
  async fold(key: string, n: number): Promise<ReshardReport> {
    const report = await reshard(this.#ctx, key, n, 1)
    await releaseHold(this.#ctx, key)
    return report
  }

  /**
   * Folds layout `n` into the original key for a command the split cannot answer, and keeps it folded on every
   * agent while the key's registry entry keeps `version` (held-fold.ts).
   */
  hold(key: string, n: number, version: number): Promise<ReshardReport> {
    return holdFolded(this.#ctx, key, n, version)
  }

  /** The registry version `key` is held folded under, or undefined. */
  heldVersion(key: string): Promise<number | undefined> {
    return heldVersion(this.#ctx, key)
  }

  /** Starts the background reconciler (one agent at a time, under a lease). */
  startReconciler(options: ReconcilerOptions): Reconciler {
    return new Reconciler(this.#ctx, options).start()
  }

  /** A reconciler that runs only when told to (runOnce): for tests and manual runs. */
  reconciler(options: ReconcilerOptions): Reconciler {
    return new Reconciler(this.#ctx, options)
  }
}

/** Builds a splitter on an ioredis client or Cluster (which it never closes). */
export function createSplitter(options: SplitterOptions): Splitter {
  return new Splitter(options)
}

// Through BigInt, so that deltas beyond 2^53 stay exact and '0' does not become '-0'.
function negate(delta: string): string {
  if (!/^-?\d+$/.test(delta))
    throw new RangeError(`delta must be an integer, received ${JSON.stringify(delta)}`)
  return (-BigInt(delta)).toString()
}
