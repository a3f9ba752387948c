import type { SplitContext } from './context.js'
import { LeaseLostError, NotAnIntegerError, ShardTypeError, throwScriptFailure } from './errors.js'
import { call, script } from './fan-out.js'
import { finishMove } from './journal.js'
import type { SplitLayout, SplitShard } from './layout.js'
import type { Lease } from './lease.js'
import { addRoute } from './routes.js'

/** What draining one shard did. */
export interface DrainOutcome {
  /** False when the shard was already drained and empty. */
  readonly drained: boolean
  /** The shard's Redis type when sealed ('string' counter, 'set', 'zset', 'hash' copy, 'none'). */
  readonly kind: string
  /** Counter value moved into the base key by this drain (0 if another drain had already moved it). */
  readonly moved: bigint
  /** Set or sorted-set members written into the base key. */
  readonly merged: number
}

/** Options of drainShard. */
export interface DrainOptions {
  /**
   * Keep the base key's score of a sorted-set member it already holds. For strays found long after a fold, when
   * writers have been writing the base key directly (not through the splitter) and its entry is the newer one.
   */
  readonly keepBaseScores?: boolean
}

const SCAN_COUNT = 500
const INTEGER = /^-?\d+$/

/**
 * Moves one shard's content into the base key, under the key's fold lease:
 *
 * 1. seal (sealShard-2.lua): the gate closes, so no write lands in the shard any more; writers are sent to
 *    `target`. Idempotent: a drain that died after sealing is resumed under the same seq.
 * 2. merge: a counter's value is added to the base key exactly once (applyCounterMove-2.lua keeps a journal keyed
 *    by shard and seq); a set's or sorted set's members are copied in, except members written or removed on the
 *    base key since the fold began (mergeMembers-3.lua).
 * 3. finish (finishShard-2.lua): the shard is deleted; its gate reopens (`final` 'open', a rebalance) or stays
 *    closed pointing at `target` (`final` 'merged', a fold or reshard). A counter's journal entry is then marked
 *    finished, and a route to another layout is renewed to outlast the closed gate (routes.ts).
 *
 * Copies ('hash') hold nothing the base key lacks, since every copy write also writes the base key: they are
 * only deleted.
 */
export async function drainShard(
  ctx: SplitContext,
  layout: SplitLayout,
  shard: SplitShard,
  target: number,
  final: 'open' | 'merged',
  lease: Lease,
  options: DrainOptions = {},
): Promise<DrainOutcome> {
  const key = layout.key
  await addRoute(ctx, key, layout.n, target)
  const sealed = (await ctx.fanOut.one(script('sealShard', [shard.data, shard.gate], target))) as [
    string,
    number,
    string,
    string | null,
    number | undefined,
  ]
  // A drain under way (resumed here) keeps the target it sealed the gate with.
  const [state, seq, kind, value, closedTo = target] = sealed
  if (state === 'merged') return { drained: false, kind, moved: 0n, merged: 0 }
  let moved = 0n
  let merged = 0
  const field = `${layout.n}:${shard.index}:${seq}`
  let journalled = false
  if (kind === 'string') {
    if (value === null || !INTEGER.test(value)) throw new NotAnIntegerError(key, shard.data)
    const amount = BigInt(value)
    if (amount !== 0n) {
      journalled = true
      const keys = [key, ctx.names.splitJournalKey(key)]
      const reply = await ctx.fanOut.one(script('applyCounterMove', keys, field, value, ctx.clock.now()))
      throwScriptFailure('applyCounterMove', reply, { key, physicalKey: key })
      if ((reply as number[])[0] === 1) moved = amount
    }
  } else if (kind === 'set' || kind === 'zset') {
    merged = await mergeScan(ctx, key, shard, kind, lease, options.keepBaseScores === true)
  } else if (kind !== 'hash' && kind !== 'none') {
    throw new ShardTypeError(key, shard.data, kind)
  }
  lease.assertHeld()
  const amount = kind === 'string' ? (value as string) : ''
  const finished = await ctx.fanOut.one(
    script('finishShard', [shard.data, shard.gate], seq, final, ctx.settings.sealTtlMs, amount),
  )
  // Whoever finished the shard marks the entry; if that agent died first, the journal collector does.
  if (finished === 1 && journalled) await finishMove(ctx, key, field)
  if (final === 'merged') await addRoute(ctx, key, layout.n, closedTo)
  return { drained: true, kind, moved, merged }
}

// SSCAN/ZSCAN return every member present for the whole scan; the shard is sealed, so none arrive during it, and
// members removed during it are on the touched set if their removal could matter.
async function mergeScan(
  ctx: SplitContext,
  key: string,
  shard: SplitShard,
  kind: 'set' | 'zset',
  lease: Lease,
  keepBaseScores: boolean,
): Promise<number> {
  const keys = [key, ctx.names.splitTouchedKey(key), lease.name]
  const mode = kind === 'set' ? 's' : keepBaseScores ? 'zk' : 'z'
  let merged = 0
  let cursor = '0'
  do {
    const command = kind === 'set' ? 'sscan' : 'zscan'
    const [next, found] = (await ctx.fanOut.one(call(command, shard.data, cursor, 'COUNT', SCAN_COUNT))) as [
      string,
      string[],
    ]
    cursor = next
    if (found.length === 0) continue
    // ZSCAN answers member, score pairs; ZADD takes score, member.
    const args = kind === 'set' ? found : swapPairs(found)
    const reply = Number(await ctx.fanOut.one(script('mergeMembers', keys, lease.token, mode, ...args)))
    if (reply === -2) throw new LeaseLostError(lease.name)
    merged += reply
  } while (cursor !== '0')
  return merged
}

function swapPairs(found: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i + 1 < found.length; i += 2) out.push(found[i + 1]!, found[i]!)
  return out
}
