import type { SplitContext } from './context.js'
import { script } from './fan-out.js'

/** A set or sorted-set write on a split key's base key. */
export type BaseOp = 'sadd' | 'srem' | 'zadd' | 'zrem'

// Lua's unpack() is bounded by its C stack (about 8000 values); long argument lists go in chunks.
const CHUNK = 1000

/**
 * Runs `op` on the base key through baseWrite-3.lua, which remembers the members while a fold of the key runs.
 * `args` are members, or for zadd score/member pairs. Resolves to the count (sadd, zadd) or one removal flag per
 * member (srem, zrem).
 */
export async function baseWrite(
  ctx: SplitContext,
  key: string,
  op: BaseOp,
  args: ReadonlyArray<string | number>,
): Promise<number | number[]> {
  const keys = [key, ctx.names.splitLeaseKey(key), ctx.names.splitTouchedKey(key)]
  const step = op === 'zadd' ? 2 : 1
  const chunk = CHUNK - (CHUNK % step)
  let count = 0
  const flags: number[] = []
  for (let first = 0; first < args.length; first += chunk) {
    const part = args.slice(first, first + chunk)
    const reply = await ctx.fanOut.one(script('baseWrite', keys, op, ctx.settings.helperTtlMs, ...part))
    if (Array.isArray(reply)) flags.push(...(reply as number[]))
    else count += Number(reply)
  }
  return op === 'srem' || op === 'zrem' ? flags : count
}

/** Adds to `into` each member whose flag (same position) is 1. */
export function addFlagged(into: Set<string>, members: readonly string[], flags: readonly number[]): void {
  for (let i = 0; i < flags.length; i++) if (flags[i] === 1) into.add(members[i]!)
}
