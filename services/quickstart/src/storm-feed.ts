import type { MissStorm } from '@heatsink/protocol'
import type { ViewEvent } from './dashboard.js'

/**
 * The miss storms a replica lists in GET /events, followed as `heatsink events --follow` does (stormsAfter = the
 * last id seen), each once, as a line of the view's events.
 */
export class StormFeed {
  // Stream ids increase; the run's namespace is new, so every storm in it is this run's.
  #after = '0-0'

  /** The storms raised since the last poll, oldest first; none while the replica cannot answer. */
  async poll(base: string): Promise<ViewEvent[]> {
    const response = await fetch(`${base}/events?limit=50&stormsAfter=${this.#after}`).catch(() => undefined)
    if (response?.ok !== true) return []
    const { missStorms = [] } = (await response.json()) as { missStorms?: MissStorm[] }
    const storms = [...missStorms].reverse()
    const last = storms.at(-1)
    if (last !== undefined) this.#after = last.id
    return storms.map((storm) => ({ at: storm.at, text: stormText(storm) }))
  }
}

function stormText(storm: MissStorm): string {
  const node = storm.node === null ? '' : ` on ${storm.node}`
  const did =
    storm.action === 'coalesce_applied'
      ? 'Heatsink applied coalesce'
      : storm.action === 'already_mitigated'
        ? `already ${storm.mitigation ?? 'mitigated'}`
        : 'coalescing failed (see the aggregator log)'
  return `miss storm on ${storm.key}${node}: ${storm.missesPerSecond.toLocaleString('en')} misses/s (baseline ${storm.baselinePerSecond.toLocaleString('en')}/s); ${did}`
}
