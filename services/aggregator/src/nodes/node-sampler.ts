import type { NodeStatus, NodesView, RegistryEntry } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import { Ticker } from '../ticker.js'
import type { KeyStats } from '../traffic-reader.js'
import { imbalanceOf, placeKeys } from './hot-key-placement.js'
import type { NodeConnections } from './node-connections.js'
import { figuresOf, type NodeReading, readInfo } from './node-figures.js'
import type { NodeStore, OpsBefore } from './node-store.js'
import { discoverTopology, type Topology } from './node-topology.js'

/** How far before a promotion the node's ops/s count as "before" it. */
const BEFORE_LOOKBACK_MS = 10_000

/** What the sampler reads besides the nodes: the keys to place on them. */
export interface KeySources {
  registered(): Promise<RegistryEntry[]>
  keyStats(key: string): Promise<KeyStats | undefined>
  /** Unregistered keys at half the hot threshold or more in the latest complete window: key -> req/s. */
  warming(registered: ReadonlySet<string>): Promise<Map<string, number>>
}

/** Options of NodeSampler. */
export interface NodeSamplerOptions {
  /** The connection that learns the topology (createControlRedis on the Redis Heatsink serves). */
  readonly discovery: Redis | Cluster
  readonly connections: NodeConnections
  readonly store: NodeStore
  readonly keys: KeySources
  /** Only the holder samples (see ReporterLease): one reader of every node for the whole fleet. */
  readonly lease: { readonly held: boolean }
  readonly intervalMs: number
  readonly now: () => number
  readonly log?: Logger
}

/**
 * Samples every node's INFO about once an interval, on the replica holding the metrics reporter lease, and keeps
 * the view in Redis (NodeStore) for every replica to serve. Rates are over the time between two of this replica's
 * samples, so after the lease moves the new holder's first sample has none.
 */
export class NodeSampler {
  readonly #options: NodeSamplerOptions
  readonly #ticker: Ticker
  readonly #previous = new Map<string, NodeReading>()
  // Kept from a node's last answer while it is down, so its page still shows what it was doing.
  readonly #lastKnown = new Map<string, Pick<NodeStatus, 'role' | 'master' | 'figures' | 'sampledAt'>>()
  #latest: NodesView | undefined
  #topology: Topology | undefined
  #discoveryFailing = false

  constructor(options: NodeSamplerOptions) {
    this.#options = options
    this.#ticker = new Ticker('node sampling', options.intervalMs, () => this.sample(), options.log)
  }

  /** The view this replica sampled last; undefined while it does not sample. */
  get latest(): NodesView | undefined {
    return this.#latest
  }

  start(): void {
    this.#ticker.start()
  }

  async stop(): Promise<void> {
    await this.#ticker.stop()
    this.#forget()
    this.#options.connections.closeAll()
  }

  /** Takes one sample and stores it, when this replica holds the lease; resolves to it. */
  async sample(): Promise<NodesView | undefined> {
    const { lease, connections, store, intervalMs, now } = this.#options
    if (!lease.held) {
      this.#forget()
      connections.closeAll()
      return undefined
    }
    const topology = withVanished(await this.#discover(), this.#lastKnown, now())
    connections.keepOnly(new Set(topology.nodes.map((node) => node.node)))
    const readings = await this.#read(topology)
    const sampledAt = now()
    const nodes = topology.nodes.map((node): NodeStatus => {
      const reading = readings.get(node.node)
      const base = { node: node.node, role: node.role, master: node.master, hotKeys: [] }
      if (!(reading instanceof Error) && reading !== undefined) {
        const master = node.master === null ? undefined : readings.get(node.master)
        const figures = figuresOf(
          node.node,
          reading,
          this.#previous.get(node.node),
          master instanceof Error ? undefined : master,
        )
        this.#previous.set(node.node, reading)
        this.#lastKnown.set(node.node, { role: reading.role, master: node.master, figures, sampledAt })
        return { ...base, role: reading.role, up: true, error: null, sampledAt, figures }
      }
      this.#previous.delete(node.node)
      const last = this.#lastKnown.get(node.node)
      const error = reading?.message ?? 'not sampled'
      return { ...base, up: false, error, sampledAt: last?.sampledAt ?? null, figures: last?.figures ?? null }
    })
    await this.#placeKeys(topology, nodes)
    const view: NodesView = {
      topology: topology.kind,
      sampledAt,
      intervalMs,
      imbalance: imbalanceOf(nodes),
      nodes,
    }
    // Kept five intervals (at least 5 s): a view nobody renews stops being served soon after.
    await store.write(view, Math.max(5000, 5 * intervalMs))
    this.#latest = view
    return view
  }

  // A topology that cannot be learnt (the server that tells it is down) is the last one learnt: its nodes are
  // then sampled as usual, so the down ones show as down instead of the view going blank. Logged once per outage.
  async #discover(): Promise<Topology> {
    const { discovery, log } = this.#options
    try {
      if (discovery.status === 'wait') await discovery.connect()
      this.#topology = await discoverTopology(discovery)
      if (this.#discoveryFailing) log?.info('learning the Redis nodes works again')
      this.#discoveryFailing = false
    } catch (error) {
      if (this.#topology === undefined) throw error
      if (!this.#discoveryFailing) {
        log?.warn({ err: error }, 'learning the Redis nodes failed; sampling the nodes last learnt')
      }
      this.#discoveryFailing = true
    }
    return this.#topology
  }

  async #read(topology: Topology): Promise<Map<string, NodeReading | Error>> {
    const { connections } = this.#options
    const readings = new Map<string, NodeReading | Error>()
    await Promise.all(
      topology.nodes.map(async ({ node }) => {
        try {
          const info = await connections.info(node)
          readings.set(node, readInfo(info, performance.now()))
        } catch (error) {
          readings.set(node, error as Error)
        }
      }),
    )
    return readings
  }

  async #placeKeys(topology: Topology, nodes: NodeStatus[]): Promise<void> {
    const { keys, store } = this.#options
    const registered = await keys.registered()
    const names = new Set(registered.map((entry) => entry.key))
    const stats = new Map<string, KeyStats | undefined>()
    const [warming, befores] = await Promise.all([
      keys.warming(names),
      store.befores(),
      ...registered.map(async (entry) => stats.set(entry.key, await keys.keyStats(entry.key))),
    ])
    const placement = placeKeys(topology, nodes, { registered, stats, warming, befores })
    const found = new Map<string, OpsBefore>()
    for (const { key, node, detectedAt } of placement.needBefore) {
      // The busiest the node was around the promotion: a key is often mitigated within a second of turning hot,
      // so the samples before the promotion, and this first one after it, each hold part of its unmitigated load.
      const peak = await store.peakOps(node, detectedAt - BEFORE_LOOKBACK_MS, detectedAt)
      const now = nodes.find((status) => status.node === node)?.figures?.opsPerSecond ?? null
      // Promoted before the history reaches back (or before sampling began): no figure is made up.
      const opsPerSecond = peak === undefined ? null : Math.max(peak ?? 0, now ?? 0)
      found.set(key, { node, detectedAt, opsPerSecond })
    }
    const forgotten = [...befores.keys()].filter((key) => !names.has(key))
    await store.updateBefores(found, forgotten)
    for (const node of nodes) {
      node.hotKeys = (placement.byNode.get(node.node) ?? []).map((hot) => {
        const before = found.get(hot.key)
        return before === undefined ? hot : { ...hot, nodeOpsBefore: before.opsPerSecond }
      })
    }
  }

  #forget(): void {
    this.#topology = undefined
    this.#previous.clear()
    this.#lastKnown.clear()
    this.#latest = undefined
  }
}

/** How long a node that left the topology (a replica its primary no longer lists) is still shown, as down. */
const VANISHED_SHOWN_MS = 5 * 60_000

// A primary forgets a replica it lost, and a dead one would otherwise leave the view without ever showing as down.
function withVanished(
  topology: Topology,
  lastKnown: Map<string, Pick<NodeStatus, 'role' | 'master' | 'sampledAt'>>,
  now: number,
): Topology {
  const listed = new Set(topology.nodes.map((node) => node.node))
  const vanished = []
  for (const [node, last] of lastKnown) {
    if (listed.has(node)) continue
    if (last.sampledAt === null || now - last.sampledAt > VANISHED_SHOWN_MS) lastKnown.delete(node)
    else vanished.push({ node, role: last.role, master: last.master, slots: [] })
  }
  return { ...topology, nodes: [...topology.nodes, ...vanished] }
}
