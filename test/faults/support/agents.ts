import { type Agent, createAgent } from '@heatsink/agent'
import { pacedReads } from '@heatsink/test'
import { afterEach } from 'vitest'

/** Agents made in the calling file's tests, closed after each test. */
export function useAgents(): (options: {
  url: string
  namespace: string
  agentId: string
  registryKey?: string
}) => Promise<Agent> {
  const made: Agent[] = []
  afterEach(async () => {
    await Promise.all(made.splice(0).map((agent) => agent.close()))
  })
  return async (options) => {
    const agent = createAgent({
      redis: options.url,
      namespace: options.namespace,
      agentId: options.agentId,
      ...(options.registryKey === undefined ? {} : { registryKey: options.registryKey }),
    })
    made.push(agent)
    await agent.ready()
    return agent
  }
}

/** Reads `key` through `agent` `rps` times a second, paced by the clock, until the returned function is called. */
export function drive(agent: Agent, key: string, rps: number): () => void {
  return pacedReads(rps, () => void agent.get(key).catch(() => {}))
}
