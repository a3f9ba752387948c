import type { Agent } from '@heatsink/agent'

/** Issues `rps` reads a second through an agent, in 10 ms slices, until the returned function is called. */
export function drive(agent: Agent, rps: number, nextKey: () => string): () => void {
  const perSlice = Math.max(1, Math.round(rps / 100))
  const timer = setInterval(() => {
    for (let i = 0; i < perSlice; i++) void agent.get(nextKey()).catch(() => {})
  }, 10)
  return () => clearInterval(timer)
}
