import type { NodesView } from '@heatsink/protocol'

const WIDTHS = [22, 8, 9, 7, 10, 8]

/**
 * The Redis nodes under the registry: a line per node with its load in the aggregator's latest sample and the hot
 * keys it owns, with their share of its ops; nothing before the first sample.
 */
export function nodeLines(view: NodesView | undefined): string[] {
  if (view === undefined || view.nodes.length === 0) return []
  const imbalance = view.imbalance === null ? '' : `, imbalance ${view.imbalance.toFixed(2)}`
  const lines = [
    `Redis nodes (${view.topology}${imbalance}), sampled by the control plane every ${view.intervalMs / 1000} s`,
    pad(['NODE', 'ROLE', 'OPS/S', 'CPU', 'MEMORY', 'CLIENTS', 'HOT KEYS (SHARE OF THE NODE OPS)']),
  ]
  for (const node of view.nodes) {
    const f = node.figures
    const hot = node.hotKeys
      .map((key) => {
        const share = key.shareOfNodeOps === null ? '-' : `${(key.shareOfNodeOps * 100).toFixed(0)}%`
        return `${key.key} ${key.state === 'warming' ? 'warming' : key.mitigation} ${share}`
      })
      .join(', ')
    lines.push(
      pad([
        node.node,
        node.up ? node.role : 'DOWN',
        f?.opsPerSecond == null ? '-' : Math.round(f.opsPerSecond).toLocaleString('en'),
        f?.cpuRatio == null ? '-' : `${(f.cpuRatio * 100).toFixed(1)}%`,
        f == null ? '-' : `${(f.usedMemoryBytes / 1024 / 1024).toFixed(1)} MB`,
        f == null ? '-' : String(f.connectedClients),
        hot || '-',
      ]),
    )
  }
  return lines
}

function pad(cells: string[]): string {
  return `  ${cells.map((cell, i) => cell.padEnd(WIDTHS[i] ?? 0)).join(' ')}`.trimEnd()
}
