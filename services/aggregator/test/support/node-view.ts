import type { NodesView } from '@heatsink/protocol'
import { type Aggregator, createAggregator } from '../../src/aggregator.js'
import { loadConfig } from '../../src/config.js'

/**
 * A started aggregator replica sampling the nodes of the Redis `env` names (REDIS_URL and the like) four times a
 * second, in a namespace of its own, with its registry on `databaseUrl`.
 */
export async function nodeSamplingAggregator(
  databaseUrl: string,
  env: Record<string, string>,
): Promise<Aggregator> {
  const aggregator = createAggregator(
    loadConfig({
      DATABASE_URL: databaseUrl,
      HEATSINK_NAMESPACE: `hs-nodes-${Math.random().toString(36).slice(2, 8)}`,
      HEATSINK_NODE_SAMPLE_MS: '250',
      PORT: '0',
      ...env,
    }),
  )
  await aggregator.start()
  return aggregator
}

/** GET /nodes of `aggregator`. */
export async function nodesOf(aggregator: Aggregator): Promise<NodesView> {
  return (await aggregator.app.inject({ url: '/nodes' })).json()
}
