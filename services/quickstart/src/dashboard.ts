import type { KeyStats } from '@heatsink/aggregator'
import type { RegistryEntry } from '@heatsink/protocol'

/** A registry change as the view shows it. */
export interface ViewEvent {
  at: number
  text: string
}

/** Everything one frame of the live view shows. */
export interface ViewState {
  elapsedSeconds: number
  header: string[]
  entries: Array<{ entry: RegistryEntry; stats: KeyStats | undefined; redisBefore: number | undefined }>
  events: ViewEvent[]
  startedAt: number
  /** A line under the table, for what the control plane cannot see (the expiring key's database loads). */
  footer: string
}

const percent = (ratio: number | null | undefined) =>
  ratio === null || ratio === undefined ? '-' : `${(ratio * 100).toFixed(1)}%`
const rate = (n: number | null | undefined) =>
  n === null || n === undefined ? '-' : Math.round(n).toLocaleString('en')

/** Renders one frame as text; the caller decides whether to redraw the terminal or append. */
export function renderView(state: ViewState): string {
  const lines = [...state.header, '']
  lines.push(
    `Registry: ${state.entries.length} hot key(s)`,
    pad(
      [
        'KEY',
        'MITIGATION',
        'SPLIT',
        'SOURCE',
        'REQ/S',
        'L1 HIT',
        'COLLAPSE',
        'REDIS READS/S BEFORE -> AFTER',
      ],
      WIDTHS,
    ),
  )
  for (const { entry, stats, redisBefore } of state.entries) {
    // Reads that still reach Redis: L1 misses (local_cache keys) per second, from the agents' last window.
    const after =
      stats && stats.localCacheHitRatio !== null
        ? stats.requestsPerSecond * (1 - stats.localCacheHitRatio)
        : undefined
    lines.push(
      pad(
        [
          entry.key,
          entry.mitigation,
          String(entry.splitFactor),
          entry.source,
          rate(stats?.requestsPerSecond),
          percent(stats?.localCacheHitRatio),
          stats?.coalesceCollapseRatio ? `${stats.coalesceCollapseRatio.toFixed(1)}x` : '-',
          entry.mitigation === 'split'
            ? `writes per shard: ${stats?.splitShardCounts.join(' ') || '-'}`
            : redisBefore === undefined
              ? '-'
              : `${rate(redisBefore)} -> ${rate(after)}`,
        ],
        WIDTHS,
      ),
    )
  }
  if (state.footer !== '') lines.push('', state.footer)
  lines.push('', 'Events')
  for (const event of state.events.slice(-8))
    lines.push(`  [+${((event.at - state.startedAt) / 1000).toFixed(1)}s] ${event.text}`)
  return lines.join('\n')
}

const WIDTHS = [22, 12, 6, 7, 9, 8, 9, 30]

function pad(cells: string[], widths: number[]): string {
  return `  ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' ')}`
}
