import type { SplitContext } from './context.js'
import { script } from './fan-out.js'
import type { SplitLayout } from './layout.js'

/**
 * A key's routes: which of its layouts have gates that send writes on to another layout (a reshard between two
 * split factors; a gate sending writes to the base key needs no route, since every read reads the base key).
 * Recorded before such a gate closes and kept as long as it may stay closed, so a counter read that finds no
 * route from a layout it reads knows, in the same snapshot, that no gate of it points elsewhere.
 */
export async function addRoute(ctx: SplitContext, key: string, from: number, to: number): Promise<void> {
  if (to <= 1) return
  await ctx.fanOut.one(script('addRoute', [ctx.names.splitRoutesKey(key)], from, to, ctx.settings.sealTtlMs))
}

/** Whether a routes string (null: none) leads from one of `layouts` to a layout not among them. */
export function routesLeaveLayouts(routes: string | null, layouts: readonly SplitLayout[]): boolean {
  if (routes === null) return false
  for (const route of routes.split(',')) {
    const cut = route.indexOf('>')
    if (cut < 0) continue
    const from = Number(route.slice(0, cut))
    const to = Number(route.slice(cut + 1))
    if (layouts.some((layout) => layout.n === from) && !layouts.some((layout) => layout.n === to)) return true
  }
  return false
}
