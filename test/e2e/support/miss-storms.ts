import { type Agent, createAgent } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import type { MissStorm } from '@heatsink/protocol'
import { inProcessAggregator } from './in-process.js'

/**
 * An aggregator replica whose hot threshold is far above the tests' traffic: a key is not mitigated when its storm
 * begins, so a storm applies coalescing itself, and nothing else is promoted.
 */
export function stormWatchingReplica(
  service: { redisUrl: string; databaseUrl: string; namespace: string },
  replicaId: string,
): Aggregator {
  return inProcessAggregator(service, { HEATSINK_HOT_RPS: '1000000', HEATSINK_REPLICA_ID: replicaId })
}

/** `count` agents on the namespace, ready, named `<prefix>-<i>`. */
export async function readyAgents(
  redisUrl: string,
  namespace: string,
  count: number,
  prefix: string,
): Promise<Agent[]> {
  const agents: Agent[] = []
  for (let i = 0; i < count; i++) {
    const agent = createAgent({ redis: redisUrl, namespace, agentId: `${prefix}-${i}` })
    await agent.ready()
    agents.push(agent)
  }
  return agents
}

/** The miss storms `GET /events` lists. */
export async function listedStorms(aggregator: Aggregator): Promise<MissStorm[]> {
  const response = await fetch(`${aggregator.url()}/events`)
  return ((await response.json()) as { missStorms: MissStorm[] }).missStorms
}
