import type { Cluster as PlainCluster } from 'ioredis'
import { afterEach } from 'vitest'
import type { Cluster } from '../../src/index.js'

/** Cluster clients a test file opens: `ready` waits for one to be ready; each is quit after its test. */
export function useClusterClients(): <T extends Cluster | PlainCluster>(client: T) => Promise<T> {
  const open: Array<Cluster | PlainCluster> = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
  })
  return async (client) => {
    open.push(client)
    if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
    return client
  }
}
