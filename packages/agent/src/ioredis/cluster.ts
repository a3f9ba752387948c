import { keepSocketErrorsHandled } from '@heatsink/protocol'
import { type ClusterNode, type ClusterOptions, type Command, Cluster as IOCluster } from 'ioredis'
import type { Agent } from '../agent.js'
import { carryRoute, type RoutableCommand } from './carry-route.js'
import { clusterDeployment } from './deployment-key.js'
import { FRONT_DOOR, FrontDoor, installFastReads } from './front-door.js'
import type { HeatsinkHandle } from './heatsink-handle.js'
import {
  attachAgent,
  dataConnectionName,
  type HeatsinkOptions,
  ownConnectionOptions,
} from './process-agents.js'

/** ioredis's Cluster options, with Heatsink's own under `heatsink` (`false` turns Heatsink off). */
export interface HeatsinkClusterOptions extends ClusterOptions {
  heatsink?: HeatsinkOptions | false
}

/**
 * ioredis's Cluster with every command going through Heatsink's data-plane core (see FrontDoor): switching is
 * an import change. Heatsink's own API is on `cluster.heatsink`.
 */
export class Cluster extends IOCluster {
  readonly [FRONT_DOOR]: FrontDoor

  constructor(startupNodes: ClusterNode[], options: HeatsinkClusterOptions = {}) {
    super(startupNodes, options)
    keepSocketErrorsHandled(this)
    const heatsink = (this.options as HeatsinkClusterOptions).heatsink
    let agent: Agent | undefined
    try {
      agent =
        heatsink === false
          ? undefined
          : attachAgent(this, clusterDeployment(startupNodes), heatsink ?? {}, () => {
              return keepSocketErrorsHandled(
                new IOCluster(startupNodes, {
                  ...ownConnectionOptions(this.options),
                  lazyConnect: false,
                  redisOptions: {
                    ...this.options.redisOptions,
                    connectionName: dataConnectionName(heatsink),
                  },
                }),
              )
            })
    } catch (error) {
      // Bad Heatsink options: the connection ioredis opened must not outlive the failed constructor.
      this.disconnect()
      throw error
    }
    this[FRONT_DOOR] = new FrontDoor(this, agent, 0)
    if (agent !== undefined) this.once('end', () => void this[FRONT_DOOR].detach())
  }

  /** Heatsink's API for this client: ready, getOrLoad, mitigation, stats, close. */
  get heatsink(): HeatsinkHandle {
    return this[FRONT_DOOR].handle
  }

  /** A new client with this one's nodes and options, as Heatsink's Cluster. */
  override duplicate(
    overrideStartupNodes: ClusterNode[] = [],
    overrideOptions: HeatsinkClusterOptions = {},
  ): Cluster {
    const nodes =
      overrideStartupNodes.length > 0
        ? overrideStartupNodes
        : (this as unknown as { startupNodes: ClusterNode[] }).startupNodes.slice(0)
    return new Cluster(nodes, { ...this.options, ...overrideOptions })
  }

  override sendCommand(command: Command, stream?: unknown, node?: unknown): unknown {
    const route = this[FRONT_DOOR].route(this, command)
    if (route === undefined) return super.sendCommand(command, stream as never, node as never)
    return carryRoute(route, command as unknown as RoutableCommand, stream, (routed, sameStream) =>
      super.sendCommand(routed, sameStream as never, node as never),
    )
  }

  static {
    installFastReads(Cluster.prototype, IOCluster.prototype)
  }
}
