import type { NodeStatus } from '@heatsink/protocol'
import type { Command } from '../command.js'
import { bytes, percent, rate } from '../format.js'
import { renderTable } from '../table.js'

/** `heatsink nodes`: every Redis node's load in the latest sample, and the hot keys it owns. */
export const nodesCommand: Command = {
  name: 'nodes',
  summary: 'list the Redis nodes: ops/s, CPU, memory, clients, lag, and the hot keys on each',
  usage: 'nodes',
  options: {},
  optionHelp: [],
  positionals: 0,
  run: async ({ client, json, out }) => {
    const view = await client.nodes()
    if (json) return out(JSON.stringify(view, null, 2))
    if (view.nodes.length === 0) {
      return out(
        view.intervalMs === 0
          ? 'Node sampling is off (HEATSINK_NODE_SAMPLE_MS=0 on the aggregator).'
          : 'No node sample yet: the aggregator replica holding the metrics lease samples every node once a second.',
      )
    }
    const imbalance = view.imbalance === null ? '-' : view.imbalance.toFixed(2)
    out(
      `${view.topology}: ${view.nodes.length} node(s), imbalance ${imbalance} (busiest master over the mean)`,
    )
    out(
      renderTable(
        [
          { heading: 'NODE' },
          { heading: 'ROLE' },
          { heading: 'OPS/S', numeric: true },
          { heading: 'CPU', numeric: true },
          { heading: 'MEMORY', numeric: true },
          { heading: 'CLIENTS', numeric: true },
          { heading: 'HITS/S', numeric: true },
          { heading: 'MISSES/S', numeric: true },
          { heading: 'LAG', numeric: true },
          { heading: 'HOT KEYS (SHARE OF OPS)' },
        ],
        view.nodes.map(row),
      ),
    )
  },
}

function row(node: NodeStatus): string[] {
  const f = node.figures
  const lag = f?.replicationLagSeconds
  return [
    node.node,
    `${node.role}${node.up ? '' : ' DOWN'}`,
    rate(f?.opsPerSecond),
    percent(f?.cpuRatio),
    `${bytes(f?.usedMemoryBytes)}${f == null || f.maxmemoryBytes === 0 ? '' : `/${bytes(f.maxmemoryBytes)}`}`,
    f == null ? '-' : String(f.connectedClients),
    rate(f?.keyspaceHitsPerSecond),
    rate(f?.keyspaceMissesPerSecond),
    lag === null || lag === undefined ? '-' : `${lag}s`,
    node.hotKeys
      .map(
        (hot) =>
          `${hot.key} (${hot.state === 'warming' ? 'warming' : hot.mitigation} ${percent(hot.shareOfNodeOps)})`,
      )
      .join(', ') || '-',
  ]
}
