import type { Command } from '../command.js'
import { percent, rate, times } from '../format.js'

/** `heatsink stats KEY`: one key's live traffic and how its mitigation performs. */
export const statsCommand: Command = {
  name: 'stats',
  summary: "show a key's live statistics",
  usage: 'stats KEY',
  options: {},
  optionHelp: [],
  positionals: 1,
  run: async ({ client, json, out }, _values, [key]) => {
    const stats = await client.stats(key as string)
    if (json) return out(JSON.stringify(stats, null, 2))
    const lines: Array<[string, string]> = [
      ['key', stats.key],
      ['requests/s (cluster-wide)', rate(stats.requestsPerSecond)],
      ['hit rate', percent(stats.hitRate)],
      ['L1 hit ratio', percent(stats.localCacheHitRatio)],
      ['coalesce collapse ratio', times(stats.coalesceCollapseRatio)],
      ['agents reporting', String(stats.agents)],
    ]
    if (stats.commandForms !== undefined) {
      lines.push(['commands seen', stats.commandForms.join(' ') || '-'])
      lines.push(['split kind', stats.splitKind ?? 'none (never split automatically)'])
    }
    if (stats.splitShardCounts.length > 0)
      lines.push(['requests per shard', stats.splitShardCounts.join(' ')])
    const width = Math.max(...lines.map(([label]) => label.length))
    out(lines.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n'))
  },
}
