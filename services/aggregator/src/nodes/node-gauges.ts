import type { NodeFigures, NodesView } from '@heatsink/protocol'
import { Gauge, type Registry } from 'prom-client'

/**
 * Registers the per-node gauges (label `node` = host:port) and `heatsink_node_imbalance`. Only the replica that
 * samples (the metrics reporter) exports them, from its latest sample, so `sum()` over replicas counts each node
 * once; elsewhere, and when that sample is older than `maxAgeMs`, they have no samples.
 */
export function registerNodeGauges(
  registry: Registry,
  latest: () => NodesView | undefined,
  now: () => number,
  maxAgeMs: number,
): void {
  const registers = [registry]
  const fresh = () => {
    const view = latest()
    return view?.sampledAt != null && now() - view.sampledAt <= maxAgeMs ? view : undefined
  }
  const perNode = (name: string, help: string, value: (figures: NodeFigures) => number | null) => {
    const gauge: Gauge<'node'> = new Gauge({
      name,
      help,
      labelNames: ['node'],
      registers,
      collect() {
        gauge.reset()
        for (const node of fresh()?.nodes ?? []) {
          const figure = node.up && node.figures !== null ? value(node.figures) : null
          if (figure !== null) gauge.set({ node: node.node }, figure)
        }
      },
    })
  }
  perNode(
    'heatsink_node_ops_per_second',
    'Commands a Redis node processed per second in the latest sample',
    (f) => f.opsPerSecond,
  )
  perNode(
    'heatsink_node_cpu_ratio',
    "A Redis node's CPU time (system + user) per second of wall time: 1 is one core busy",
    (f) => f.cpuRatio,
  )
  perNode('heatsink_node_used_memory_bytes', "A Redis node's used_memory", (f) => f.usedMemoryBytes)
  perNode('heatsink_node_connected_clients', "A Redis node's connected clients", (f) => f.connectedClients)
  perNode(
    'heatsink_node_replication_lag_seconds',
    "A replica's seconds since it last acknowledged its master (replicas only)",
    (f) => f.replicationLagSeconds,
  )

  const up: Gauge<'node'> = new Gauge({
    name: 'heatsink_node_up',
    help: 'Whether a Redis node answered INFO in the latest sample (1) or not (0)',
    labelNames: ['node'],
    registers,
    collect() {
      up.reset()
      for (const node of fresh()?.nodes ?? []) up.set({ node: node.node }, node.up ? 1 : 0)
    },
  })
  const imbalance = new Gauge({
    name: 'heatsink_node_imbalance',
    help: "The busiest Redis master's ops/s over the masters' mean (1: even)",
    registers,
    collect() {
      imbalance.reset()
      const value = fresh()?.imbalance
      if (value != null) imbalance.set(value)
    },
  })
}
