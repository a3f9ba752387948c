import type { Agent } from '@heatsink/agent'
import { pacedReads } from '@heatsink/test'

/** Issues `rps` reads a second through an agent, paced by the clock, until the returned function is called. */
export function drive(agent: Agent, rps: number, nextKey: () => string): () => void {
  return pacedReads(rps, () => void agent.get(nextKey()).catch(() => {}))
}
