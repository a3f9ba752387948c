import { Redis as HeatsinkRedis } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import { createProxy, type RespProxy } from '@heatsink/proxy'
import type { Cluster, Redis } from 'ioredis'
import { inProcessAggregator } from './in-process.js'

/** Where a fleet's control Redis is, as each kind of component is told. */
export interface ControlAddress {
  /** HEATSINK_CONTROL_REDIS_URL. */
  readonly url: string
  /** HEATSINK_CONTROL_REDIS_CLUSTER=true (and the proxy's controlCluster). */
  readonly cluster?: boolean
  /** The drop-in's `control` option; default `url`. */
  readonly dropIn?: string | Redis | Cluster
}

/** An aggregator, a proxy and an ioredis drop-in on one data Redis and one control Redis. */
export interface ControlFleet {
  readonly aggregator: Aggregator
  /** The aggregator's base URL. */
  readonly base: string
  readonly proxy: RespProxy
  readonly proxyPort: number
  readonly dropIn: HeatsinkRedis
  /** Each agent's mitigation lookup (the proxy's, the drop-in's). */
  readonly everyAgent: () => Array<(key: string) => string | undefined>
  stop(): Promise<void>
}

/** Starts the fleet of the control-Redis tests, every component ready; `name` prefixes the agents' ids. */
export async function startControlFleet(options: {
  name: string
  namespace: string
  dataUrl: string
  databaseUrl: string
  control: ControlAddress
}): Promise<ControlFleet> {
  const { name, namespace, dataUrl, control } = options
  const aggregator = inProcessAggregator(
    { redisUrl: dataUrl, databaseUrl: options.databaseUrl, namespace },
    {
      HEATSINK_CONTROL_REDIS_URL: control.url,
      HEATSINK_HOT_RPS: '200',
      ...(control.cluster === true && {
        HEATSINK_CONTROL_REDIS_CLUSTER: 'true',
        HEATSINK_COUNTER_SHARDS: '16',
      }),
    },
  )
  await aggregator.start()
  const { proxy, port: proxyPort } = await createProxy({
    backend: dataUrl,
    control: control.url,
    controlCluster: control.cluster === true,
    port: 0,
    heatsink: { namespace, agentId: `${name}-proxy` },
  })
  await proxy.agent.ready()
  const dropIn = new HeatsinkRedis(dataUrl, {
    heatsink: { namespace, agentId: `${name}-drop-in`, control: control.dropIn ?? control.url },
  })
  dropIn.on('error', () => {})
  await dropIn.heatsink.ready()
  return {
    aggregator,
    base: aggregator.url() as string,
    proxy,
    proxyPort,
    dropIn,
    everyAgent: () => [proxy.agent.mitigation.bind(proxy.agent), dropIn.heatsink.mitigation],
    stop: async () => {
      await dropIn.quit()
      await proxy.close(1000)
      await aggregator.stop()
    },
  }
}
