import type { ClusterNode } from '@heatsink/devservices'
import { Cluster } from 'ioredis'

/** A Cluster client on `nodes`, ready (slot map loaded) when it resolves; added to `clients` for teardown. */
export async function connectCluster(
  nodes: ClusterNode[],
  clients: Array<{ disconnect(): void }>,
): Promise<Cluster> {
  const client = new Cluster(nodes)
  clients.push(client)
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve)
    client.once('error', reject)
  })
  return client
}
