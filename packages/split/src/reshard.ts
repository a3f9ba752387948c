import type { SplitContext } from './context.js'
import { drainShard } from './drain.js'
import { FoldTimeoutError } from './errors.js'
import { call, script } from './fan-out.js'
import { markHeld, staysHeld } from './held-fold.js'
import { collectJournal } from './journal.js'
import { Lease } from './lease.js'
import { addRoute } from './routes.js'
import { assertSplitFactor } from './split-factor.js'

/** What a fold or reshard did. */
export interface ReshardReport {
  readonly key: string
  readonly from: number
  readonly to: number
  /** Shards drained by this call (0 when another agent had already done it). */
  readonly drained: number
  /** Counter value this call moved into the base key, as a decimal string (exact beyond 2^53). */
  readonly moved: string
  /** Set or sorted-set members this call wrote into the base key. */
  readonly merged: number
  /** Passes over the shards; the last one found every shard drained and empty. */
  readonly passes: number
}

/** Options of activate. */
export interface ActivateOptions {
  /**
   * Clock time until which this process keeps writing the key to its base key: the promotion's time plus the
   * registry's propagation bound, so that no agent still treating the key as unsplit misses a shard's write.
   */
  readonly holdWritesUntil?: number
  /**
   * The registry version of the promotion: a layout a data plane holds folded under this very version stays
   * folded (held-fold.ts).
   */
  readonly version?: number
}

// The second pass normally finds nothing; a few more cover a shard reopened by a stale activation meanwhile.
const MAX_PASSES = 5

/**
 * Opens layout `n` of `key` for writes: reopens the gates an earlier fold of the same layout left closed. Call it
 * when a key is promoted to split (or its factor changes to `n`); shards with no gate are open already.
 */
export async function activate(
  ctx: SplitContext,
  key: string,
  n: number,
  options: ActivateOptions = {},
): Promise<void> {
  assertSplitFactor(n)
  if (options.holdWritesUntil !== undefined) ctx.transitions.hold(key, n, options.holdWritesUntil)
  if (options.version !== undefined && (await staysHeld(ctx, key, options.version))) return
  const layout = ctx.layouts.get(key, n)
  await ctx.fanOut.all(layout.shards.map((shard) => script('reopenShard', [shard.gate])))
}

/**
 * Moves `key` from layout `from` to layout `to` (1 = unsplit, so reshard(key, n, 1) is a fold), with writers on
 * other agents still using either layout meanwhile. Steps:
 *
 * 1. at once (synchronously): this process's operations on the key also read, and remove from, layout `from`,
 *    and its writes for `to` go through `from`'s gates (Transitions);
 * 2. open layout `to`;
 * 3. take the key's fold lease, waiting for another agent's fold of the key to end. While it exists, writes on
 *    the base key through the splitter record the members they touch (baseWrite-3.lua);
 * 4. record the route from `from` to `to` (routes.ts), then close every gate of `from` (seal): from here on no
 *    write lands in `from`; writers still using it are sent to `to`, and readers still using it follow the gates
 *    to `to`. This process's writes now go to `to`;
 * 5. drain every shard of `from` into the base key (drainShard), in parallel, and pass over them again until a
 *    pass finds all of them drained and empty;
 * 6. end the fold: lease and touched set deleted together.
 *
 * Nothing is lost: a shard takes no write once its gate is closed, and is deleted only after its content is in
 * the base key. Nothing is doubled: a counter shard's value is added under a journal entry keyed by its drain's
 * seq, once; members are merged idempotently, skipping members touched on the base key meanwhile, so a removal
 * or newer score there is never undone. Every agent that hears of the change should call this at once and keep
 * using the splitter for the key until its call resolves; calls after the first find the work done.
 */
export async function reshard(
  ctx: SplitContext,
  key: string,
  from: number,
  to: number,
): Promise<ReshardReport> {
  assertSplitFactor(from)
  assertSplitFactor(to)
  const nothing = { key, from, to, drained: 0, moved: '0', merged: 0, passes: 0 }
  if (from === to) return nothing
  if (from === 1) {
    await activate(ctx, key, to)
    return nothing
  }
  const { names, settings } = ctx
  const transition = ctx.transitions.beginDrain(key, from, to)
  try {
    if (to > 1) await activate(ctx, key, to)
    const lease = await Lease.acquire(
      ctx,
      names.splitLeaseKey(key),
      settings.leaseMs,
      settings.foldTimeoutMs,
      () => {
        return new FoldTimeoutError(key, settings.foldTimeoutMs)
      },
    )
    try {
      // Recorded first, so that the reconciler finishes the job if this agent dies part way.
      await ctx.fanOut.one(
        call('zadd', names.splitFoldedKey, ctx.clock.now() + settings.foldedRecheckMs, `${from}:${key}`),
      )
      const layout = ctx.layouts.get(key, from)
      await addRoute(ctx, key, from, to)
      await ctx.fanOut.all(layout.shards.map((shard) => script('sealShard', [shard.data, shard.gate], to)))
      transition.close()
      let drained = 0
      let moved = 0n
      let merged = 0
      let passes = 0
      while (passes < MAX_PASSES) {
        passes++
        const outcomes = await Promise.all(
          layout.shards.map((shard) => drainShard(ctx, layout, shard, to, 'merged', lease)),
        )
        const fresh = outcomes.filter((outcome) => outcome.drained)
        if (fresh.length === 0) break
        drained += fresh.length
        for (const outcome of fresh) {
          moved += outcome.moved
          merged += outcome.merged
        }
      }
      await lease.endFold(names.splitTouchedKey(key))
      if (moved !== 0n) scheduleJournalCollection(ctx, key)
      return { key, from, to, drained, moved: moved.toString(), merged, passes }
    } catch (error) {
      await lease.release().catch(() => {})
      throw error
    }
  } finally {
    transition.end()
  }
}

/** Collects the journal of moves just finished once no read can straddle them any more (see journal.ts). */
export function scheduleJournalCollection(ctx: SplitContext, key: string): void {
  const grace = ctx.settings.journalGraceMs + 1
  const collect = () =>
    collectJournal(ctx, key).catch(() => {
      // The reconciler collects whatever this misses.
    })
  // Two steps a grace period apart: clear the gates' records, then delete the entries.
  ctx.clock.setTimeout(() => {
    collect().then(() => ctx.clock.setTimeout(collect, grace))
  }, grace)
}

/** Marks `key` held under registry `version` (held-fold.ts), then folds layout `n` into the base key. */
export async function holdFolded(
  ctx: SplitContext,
  key: string,
  n: number,
  version: number,
): Promise<ReshardReport> {
  // The mark goes first: a reconciler that takes the key's fold lease between the fold and a later mark would
  // reopen the gates.
  await markHeld(ctx, key, version)
  return reshard(ctx, key, n, 1)
}
