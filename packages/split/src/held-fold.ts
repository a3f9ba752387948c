import type { SplitContext } from './context.js'
import { call } from './fan-out.js'

/**
 * A fold a data plane made because a split key met a command its split cannot answer (say APPEND on a counter),
 * recorded in Redis (names.splitHeldKey, in the key's slot) with the registry version it was made under. Every
 * agent must then leave the layout folded while the registry entry keeps that version: an agent starting up
 * (which activates every split key it loads) or the reconciler (which reopens gates a fold closed) would
 * otherwise reopen the shards under a data plane that now serves the key from its base key alone. A new registry
 * version (the key promoted again or resharded) is a new decision and ends the hold; a demotion removes the mark.
 */

/** Marks `key` held under registry `version` (reshard.ts's holdFolded, before it folds). */
export async function markHeld(ctx: SplitContext, key: string, version: number): Promise<void> {
  await ctx.fanOut.one(call('set', ctx.names.splitHeldKey(key), String(version)))
}

/** The registry version `key` is held folded under, or undefined when it is not held. */
export async function heldVersion(ctx: SplitContext, key: string): Promise<number | undefined> {
  const value = (await ctx.fanOut.one(call('get', ctx.names.splitHeldKey(key)))) as string | null
  return value === null ? undefined : Number(value)
}

/** Whether activating or tidying `key` under registry `version` must leave it folded: held under that very version. */
export async function staysHeld(ctx: SplitContext, key: string, version: number): Promise<boolean> {
  return (await heldVersion(ctx, key)) === version
}

/** Ends the hold of `key` whatever its version: on demotion, when no layout is left to keep folded. */
export async function releaseHold(ctx: SplitContext, key: string): Promise<void> {
  await ctx.fanOut.one(call('del', ctx.names.splitHeldKey(key)))
}
