import type { StoredKeyStats } from '@heatsink/aggregator'

/** How many seconds of the agents' windows the view's ABSORBED column covers. */
export const ABSORBED_SECONDS = 5

interface Window {
  windowStart: number
  lookups: number
  fills: number
}

/**
 * The share of a local_cache key's reads that did not reach Redis over the agents' last ABSORBED_SECONDS of
 * windows, for the view. One agent's one-second window holds only a handful of fills (one per L1 lifetime, about
 * two a second), so a percentage to a tenth of a point taken from it moves with where the fills fall: the same
 * rate shows 99.9% one second and 99.8% the next. Each agent's latest window (GET /hotkeys/{key}/agents) is kept
 * as the view reads it every second, and the share is summed over those of the last few seconds.
 */
export class AbsorbedShare {
  /** By key (a handful: the registry's local_cache keys), then by agent: that agent's windows seen, oldest first. */
  readonly #windows = new Map<string, Map<string, Window[]>>()

  /** Takes in each agent's latest statistics for `key`; returns the share over the recent windows, or null. */
  update(key: string, latest: readonly StoredKeyStats[], now: number): number | null {
    let agents = this.#windows.get(key)
    if (agents === undefined) {
      agents = new Map()
      this.#windows.set(key, agents)
    }
    for (const stats of latest) {
      const windows = agents.get(stats.agentId) ?? []
      agents.set(stats.agentId, windows)
      if (windows.at(-1)?.windowStart === stats.windowStart) continue
      const lookups = stats.l1Hits + stats.l1Misses
      windows.push({ windowStart: stats.windowStart, lookups, fills: Math.min(lookups, stats.l1Fills ?? 0) })
    }
    const oldest = now - (ABSORBED_SECONDS + 2) * 1000
    let lookups = 0
    let fills = 0
    for (const [agentId, windows] of agents) {
      while (windows.length > 0 && (windows[0] as Window).windowStart < oldest) windows.shift()
      if (windows.length === 0) agents.delete(agentId)
      for (const window of windows.slice(-ABSORBED_SECONDS)) {
        lookups += window.lookups
        fills += window.fills
      }
    }
    return lookups === 0 ? null : 1 - fills / lookups
  }
}
