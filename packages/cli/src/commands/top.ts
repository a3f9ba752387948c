import type { HotKey, KeyStats } from '../client.js'
import type { Command, CommandContext } from '../command.js'
import { CliError, ExitCode } from '../exit-codes.js'
import { percent, rate, times, timestamp } from '../format.js'
import { renderTable } from '../table.js'

// Clears the screen and homes the cursor: the view is redrawn in place instead of scrolling.
const REDRAW = '\x1b[H\x1b[2J'

interface Row {
  entry: HotKey
  stats: KeyStats | undefined
}

/** `heatsink top`: hot keys and their live statistics, refreshed; a table on a terminal, rows in a pipe. */
export const topCommand: Command = {
  name: 'top',
  summary: 'watch the hot keys live (redraws on a terminal, prints rows when piped)',
  usage: 'top [--interval S] [--count N]',
  options: { interval: { type: 'string', short: 'i' }, count: { type: 'string', short: 'c' } },
  optionHelp: [
    '-i, --interval S   seconds between refreshes (default 1)',
    '-c, --count N      stop after N refreshes (default: until Ctrl-C)',
  ],
  positionals: 0,
  run: async (context, values) => {
    const intervalMs = positive('--interval', values.interval ?? '1') * 1000
    const count = values.count === undefined ? Number.POSITIVE_INFINITY : positive('--count', values.count)
    const tty = process.stdout.isTTY === true && !context.json
    const { stop } = context
    for (let shown = 0; shown < count && !stop.requested; shown++) {
      if (shown > 0) await stop.pause(intervalMs)
      if (stop.requested) break
      const rows = await read(context)
      if (context.json) context.out(JSON.stringify({ at: Date.now(), hotkeys: rows.map(toJson) }))
      else if (tty) context.out(`${REDRAW}${screen(rows)}`)
      else for (const line of plainRows(rows)) context.out(line)
    }
  },
}

async function read({ client }: CommandContext): Promise<Row[]> {
  const { hotkeys } = await client.hotkeys()
  // A key demoted between the two calls has no stats (404): shown without them rather than failing the view.
  return Promise.all(
    hotkeys.map(async (entry) => ({ entry, stats: await client.stats(entry.key).catch(() => undefined) })),
  )
}

function screen(rows: Row[]): string {
  const title = `heatsink top   ${timestamp(Date.now())}   ${rows.length} hot key(s)   Ctrl-C quits`
  if (rows.length === 0) return `${title}\n\nNo key is in the registry.`
  const table = renderTable(
    [
      { heading: 'KEY' },
      { heading: 'MITIGATION' },
      { heading: 'SOURCE' },
      { heading: 'REQ/S', numeric: true },
      { heading: 'L1 HIT', numeric: true },
      { heading: 'COLLAPSE', numeric: true },
      { heading: 'SHARDS' },
    ],
    rows.map(({ entry, stats }) => [
      entry.key,
      entry.mitigation === 'split' ? `split x${entry.splitFactor}` : entry.mitigation,
      entry.source,
      rate(stats?.requestsPerSecond ?? entry.requestsPerSecond),
      percent(stats?.localCacheHitRatio),
      times(stats?.coalesceCollapseRatio),
      stats?.splitShardCounts.join(' ') || '-',
    ]),
  )
  return `${title}\n\n${table}`
}

// Piped: one line per key and refresh, whitespace-separated and prefixed by the time, for grep, awk and logs.
function plainRows(rows: Row[]): string[] {
  const at = timestamp(Date.now())
  if (rows.length === 0) return [`${at} no hot keys`]
  return rows.map(
    ({ entry, stats }) =>
      `${at} ${JSON.stringify(entry.key)} ${entry.mitigation} split=${entry.splitFactor} source=${entry.source} ` +
      `rps=${rate(stats?.requestsPerSecond ?? entry.requestsPerSecond)} l1=${percent(stats?.localCacheHitRatio)} ` +
      `collapse=${times(stats?.coalesceCollapseRatio)}`,
  )
}

function toJson({ entry, stats }: Row) {
  return { ...entry, stats: stats ?? null }
}

function positive(flag: string, text: string | boolean): number {
  const value = Number(text)
  if (typeof text !== 'string' || !(value > 0)) {
    throw new CliError(`${flag} must be a positive number, got '${String(text)}'`, ExitCode.usage)
  }
  return value
}
