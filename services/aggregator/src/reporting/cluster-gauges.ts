import { type AgentStatus, Mitigation, type RegistryEntry } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import { Gauge, type Registry } from 'prom-client'
import { type GroupBacklog, readGroupBacklog } from './stream-backlog.js'

/** What the cluster-wide gauges are read from, at scrape time. */
export interface ClusterGaugeSources {
  /** Only the holder exports the cluster-wide gauges (see ReporterLease). */
  readonly lease: { readonly held: boolean }
  readonly registry: { list(): Promise<RegistryEntry[]> }
  readonly redis: Redis | Cluster
  readonly reportStreams: readonly string[]
  readonly consumerGroup: string
  /** The agents heard from (AgentDirectory); without it heatsink_agents is not exported. */
  readonly agents?: { list(): Promise<AgentStatus[]> }
  readonly log?: Logger
}

/**
 * Registers the gauges that describe the whole deployment rather than one replica: hot keys by mitigation, and
 * each report stream's backlog and pending entries. They are read when Prometheus scrapes, and only on the replica
 * holding the reporter lease; the others export no sample of them, so `sum()` over replicas counts each once.
 * `heatsink_metrics_reporter` (1 on that replica, 0 elsewhere) shows which replica it is.
 * A source that fails (Postgres or Redis down) leaves its gauge without samples for that scrape, logged, so the
 * rest of the scrape still answers.
 */
export function registerClusterGauges(registry: Registry, sources: ClusterGaugeSources): void {
  const registers = [registry]
  const { lease, log } = sources
  // On any replica: reset first, so one that lost the lease stops exporting what it reported before.
  const whenReporting = async (gauge: Gauge<string>, what: string, fill: () => Promise<void>) => {
    gauge.reset()
    if (!lease.held) return
    try {
      await fill()
    } catch (error) {
      log?.warn({ err: error, metric: what }, 'reading a cluster gauge failed; left out of this scrape')
    }
  }

  new Gauge({
    name: 'heatsink_metrics_reporter',
    help: 'Whether this replica exports the cluster-wide gauges (hot keys, report stream backlog); one replica does',
    registers,
    collect() {
      this.set(lease.held ? 1 : 0)
    },
  })

  const hotKeys: Gauge<'mitigation'> = new Gauge({
    name: 'heatsink_hot_keys',
    help: 'Active registry entries, by mitigation; exported by the metrics reporter replica only',
    labelNames: ['mitigation'],
    registers,
    collect: () =>
      whenReporting(hotKeys, 'heatsink_hot_keys', async () => {
        const entries = await sources.registry.list()
        for (const mitigation of Mitigation.options) {
          hotKeys.set({ mitigation }, entries.filter((entry) => entry.mitigation === mitigation).length)
        }
      }),
  })

  const streamGauge = (name: string, help: string, value: (found: GroupBacklog) => number | null) => {
    const gauge: Gauge<'stream'> = new Gauge({
      name,
      help,
      labelNames: ['stream'],
      registers,
      collect: () =>
        whenReporting(gauge, name, async () => {
          for (const stream of sources.reportStreams) {
            const found = await readGroupBacklog(sources.redis, stream, sources.consumerGroup)
            const count = found === undefined ? 0 : value(found)
            if (count !== null) gauge.set({ stream }, count)
          }
        }),
    })
  }
  streamGauge(
    'heatsink_report_stream_backlog',
    'Report stream entries not yet delivered to any replica (XINFO GROUPS lag); exported by the metrics reporter only',
    (found) => found.backlog,
  )
  const agentSource = sources.agents
  if (agentSource !== undefined) {
    const agents: Gauge<'state'> = new Gauge({
      name: 'heatsink_agents',
      help: 'Agents heard from in the last ten minutes, by state: reporting, or stale (no report for three windows); exported by the metrics reporter only',
      labelNames: ['state'],
      registers,
      collect: () =>
        whenReporting(agents, 'heatsink_agents', async () => {
          const listed = await agentSource.list()
          const stale = listed.filter((agent) => agent.stale).length
          agents.set({ state: 'stale' }, stale)
          agents.set({ state: 'reporting' }, listed.length - stale)
        }),
    })
  }
  streamGauge(
    'heatsink_report_stream_pending',
    'Report stream entries delivered to a replica and not yet acknowledged (XPENDING); exported by the metrics reporter only',
    (found) => found.pending,
  )
}
