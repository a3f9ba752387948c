import type { HeatsinkNames, RegistryEntry } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { Component } from '../component.js'
import type { Config } from '../config.js'
import type { NodeRoutesOptions } from '../http/node-routes.js'
import { createControlRedis } from '../redis-connection.js'
import type { KeyStats } from '../traffic-reader.js'
import { NodeConnections } from './node-connections.js'
import { registerNodeGauges } from './node-gauges.js'
import { NodeSampler } from './node-sampler.js'
import { NodeStore } from './node-store.js'
import { WarmingKeys } from './warming-keys.js'

/** What the node view is made from, in one aggregator replica. */
export interface NodeViewSources {
  readonly config: Pick<Config, 'nodeRedis' | 'nodeSampleMs' | 'replicaId' | 'hotRps' | 'windowMs'>
  readonly names: HeatsinkNames
  /** The command connection, where the view is kept. */
  readonly redis: Redis | Cluster
  readonly lease: { readonly held: boolean }
  readonly registry: { list(): Promise<RegistryEntry[]> }
  readonly traffic: {
    keyStats(key: string): Promise<KeyStats | undefined>
    latestCompleteWindow(): number
  }
  readonly counters: { totals(windowStart: number): Promise<Map<string, number>> }
  readonly metrics: Registry
  readonly now: () => number
  readonly log?: Logger
}

/** The node view's parts: the routes' options, and the sampler as a component (absent when sampling is off). */
export interface NodeView {
  readonly routes: NodeRoutesOptions
  readonly sampler: NodeSampler | undefined
  readonly component: Component | undefined
}

/** Builds the node view of one replica (HEATSINK_NODE_SAMPLE_MS=0: the routes only, answering with no nodes). */
export function createNodeView(sources: NodeViewSources): NodeView {
  const { config, names, redis, log } = sources
  const store = new NodeStore(redis, names)
  const routes = { store, intervalMs: config.nodeSampleMs }
  if (config.nodeSampleMs === 0) return { routes, sampler: undefined, component: undefined }

  const connectionName = `heatsink-nodes:${config.replicaId}`
  const discovery = createControlRedis(config.nodeRedis, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectionName,
  })
  // Its failures are the sampler's to report (once per outage); each reconnect attempt would only print.
  discovery.on('error', () => {})
  const warming = new WarmingKeys({
    counters: sources.counters,
    latestCompleteWindow: () => sources.traffic.latestCompleteWindow(),
    hotRps: config.hotRps,
    windowMs: config.windowMs,
    now: sources.now,
  })
  const sampler = new NodeSampler({
    discovery,
    connections: new NodeConnections(config.nodeRedis, connectionName),
    store,
    lease: sources.lease,
    intervalMs: config.nodeSampleMs,
    now: sources.now,
    ...(log === undefined ? {} : { log }),
    keys: {
      registered: () => sources.registry.list(),
      keyStats: (key) => sources.traffic.keyStats(key),
      warming: (registered) => warming.read(registered),
    },
  })
  // Three intervals: a sample that stopped (lease lost, Redis down) stops being exported soon after.
  registerNodeGauges(sources.metrics, () => sampler.latest, sources.now, 3 * config.nodeSampleMs)
  return {
    routes,
    sampler,
    component: {
      name: 'node sampling',
      start: async () => sampler.start(),
      stop: async () => {
        await sampler.stop()
        discovery.disconnect()
      },
    },
  }
}
