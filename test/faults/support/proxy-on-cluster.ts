import type { RedisCluster } from '@heatsink/devservices'
import { createProxy } from '@heatsink/proxy'
import { Cluster as PlainCluster, Redis as PlainRedis } from 'ioredis'
import { type ScenarioClients, scenarioClients } from './failover-scenario.js'

/**
 * The scenario's clients with Heatsink's RESP proxy (cluster mode) in front of `servers`: plain ioredis clients
 * read and write another key of the slot through the proxy (so its writes are measured through the failover too),
 * and the writer of the counter and the reference reader use the Cluster directly. The proxy's L1 answers are its `served` count; its
 * agent gives the rest of the figures.
 */
export function proxyClientsOn(servers: RedisCluster) {
  return async (key: string, namespace: string): Promise<ScenarioClients> => {
    const first = servers.nodes[0]
    if (first === undefined) throw new Error('the cluster has no node')
    const { proxy, port } = await createProxy({
      backend: `redis://${first.host}:${first.port}`,
      cluster: true,
      port: 0,
      heatsink: { namespace, agentId: 'proxy-on-cluster' },
    })
    await proxy.agent.ready()
    const throughProxy = Object.assign(new PlainRedis({ host: '127.0.0.1', port }), {
      heatsink: {
        stats: () => ({ ...proxy.agent.stats(), l1Hits: proxy.stats.served }),
        mitigation: (of: string) => proxy.agent.mitigation(of),
      },
    })
    const writer = new PlainCluster(servers.nodes)
    const plain = new PlainCluster(servers.nodes)
    const doorWriter = new PlainRedis({ host: '127.0.0.1', port })
    doorWriter.on('error', () => {})
    const clients = scenarioClients(key, writer, plain, throughProxy, undefined, async () => {
      doorWriter.disconnect()
      await proxy.close(1000)
    })
    return { ...clients, doorWriter }
  }
}
