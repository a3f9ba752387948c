import type { KeyStats } from '@heatsink/aggregator'
import type { NodesView, RegistryEntry } from '@heatsink/protocol'
import { nodeLines } from './node-lines.js'

/** A registry change as the view shows it. */
export interface ViewEvent {
  at: number
  text: string
}

/** Everything one frame of the live view shows. */
export interface ViewState {
  elapsedSeconds: number
  header: string[]
  entries: Array<{
    entry: RegistryEntry
    stats: KeyStats | undefined
    redisBefore: number | undefined
    /** The share of the key's reads absorbed over the last few seconds (AbsorbedShare), when known. */
    absorbed?: number | null
  }>
  events: ViewEvent[]
  startedAt: number
  /** A line under the table, for what the control plane cannot see (the expiring key's database loads). */
  footer: string
  /** GET /nodes of a replica: the Redis nodes' load; absent before the first sample. */
  nodes?: NodesView
}

/** Widest line the view prints: a log reader's or CI page's width, and a terminal's usual one. */
export const MAX_COLUMNS = 120

const percent = (ratio: number | null | undefined) =>
  ratio === null || ratio === undefined ? '-' : `${(ratio * 100).toFixed(1)}%`
const rate = (n: number | null | undefined) =>
  n === null || n === undefined ? '-' : Math.round(n).toLocaleString('en')

/** The whole screen, redrawn each second on a terminal: header, registry table, footer, latest events. */
export function renderView(state: ViewState): string {
  const lines = [...state.header, '', ...registryLines(state)]
  if (state.footer !== '') lines.push('', state.footer)
  const nodes = nodeLines(state.nodes)
  if (nodes.length > 0) lines.push('', ...nodes)
  // A heading only over something: before the first promotion there is no Events section at all.
  if (state.events.length > 0) {
    lines.push(
      '',
      'Events',
      ...state.events.slice(-8).map((event) => `  ${eventLine(event, state.startedAt)}`),
    )
  }
  return fit(lines).join('\n')
}

/** The summary a piped run prints every few seconds: the registry table and the footer, no header or events. */
export function renderSummary(state: ViewState): string {
  const lines = [`[+${state.elapsedSeconds}s] ${registryLines(state).join('\n')}`]
  if (state.footer !== '') lines.push(state.footer)
  lines.push(...nodeLines(state.nodes))
  return fit(lines.join('\n').split('\n')).join('\n')
}

/** One event as one line: `[+6.4s] demo:post:42 promoted (auto): ...`. */
export function eventLine(event: ViewEvent, startedAt: number): string {
  return `[+${((event.at - startedAt) / 1000).toFixed(1)}s] ${event.text}`
}

/** Wraps every line longer than MAX_COLUMNS at spaces, continuing indented by four. */
export function fit(lines: readonly string[]): string[] {
  const out: string[] = []
  for (const line of lines) {
    let rest = line
    while (rest.length > MAX_COLUMNS) {
      const cut = rest.lastIndexOf(' ', MAX_COLUMNS)
      // A word longer than a line (no space to cut at) is cut where the line ends.
      const at = cut > 4 ? cut : MAX_COLUMNS
      out.push(rest.slice(0, at).trimEnd())
      rest = `    ${rest.slice(at).trimStart()}`
    }
    out.push(rest)
  }
  return out
}

function registryLines(state: ViewState): string[] {
  if (state.entries.length === 0) return ['Registry: no hot key yet']
  const lines = [
    `Registry: ${state.entries.length} hot key(s)`,
    pad([
      'KEY',
      'MITIGATION',
      'SPLIT',
      'SOURCE',
      'REQ/S',
      'ABSORBED',
      'COLLAPSE',
      'REDIS READS/S BEFORE -> AFTER',
    ]),
  ]
  for (const { entry, stats, redisBefore, absorbed: recent } of state.entries) {
    // Reads that still reach Redis (local_cache keys): L1's fills per second, over the agents' last few windows
    // (else their last one). A miss that waits on another's fill in flight is absorbed as a hit is: the key is read
    // from Redis once for both.
    const absorbed = recent ?? stats?.localCacheAbsorbedRatio ?? stats?.localCacheHitRatio ?? null
    const after = stats && absorbed !== null ? stats.requestsPerSecond * (1 - absorbed) : undefined
    lines.push(
      pad([
        entry.key,
        entry.mitigation,
        String(entry.splitFactor),
        entry.source,
        rate(stats?.requestsPerSecond),
        percent(absorbed),
        stats?.coalesceCollapseRatio ? `${stats.coalesceCollapseRatio.toFixed(1)}x` : '-',
        entry.mitigation === 'split'
          ? `writes per shard: ${stats?.splitShardCounts.join(' ') || '-'}`
          : redisBefore === undefined
            ? '-'
            : `${rate(redisBefore)} -> ${rate(after)}`,
      ]),
    )
  }
  return lines
}

const WIDTHS = [22, 12, 6, 7, 9, 8, 9, 30]

function pad(cells: string[]): string {
  return `  ${cells.map((cell, i) => cell.padEnd(WIDTHS[i] ?? 0)).join(' ')}`.trimEnd()
}
