import type { Mitigation } from '@heatsink/protocol'
import type { Agent } from '../agent.js'
import type { AgentStats } from '../events/stats.js'
import type { Loader, LoadOptions } from '../get-or-load/loader.js'

/** What `redis.heatsink` offers besides the client's own commands. */
export interface HeatsinkHandle {
  /** Resolves once the registry is loaded and every invalidation channel is live. */
  ready(): Promise<void>
  /** The cached value of `key`, or `loader`'s, loaded once however many callers in however many processes ask. */
  getOrLoad<T>(key: string, loader: Loader<T>, options: LoadOptions): Promise<T>
  /** The key's mitigation as this process sees the registry now, or undefined. */
  mitigation(key: string): Mitigation | undefined
  /** The process agent's counters (shared by every client of the same deployment). */
  stats(): AgentStats
  /** Stops routing this client's commands through Heatsink; the last client to stop closes the agent. */
  close(): Promise<void>
}

/** The handle over a process agent, for one client. */
export function handleFor(agent: () => Agent | undefined, close: () => Promise<void>): HeatsinkHandle {
  const current = (): Agent => {
    const found = agent()
    if (found === undefined) throw new Error('heatsink is closed for this client')
    return found
  }
  return {
    ready: () => current().ready(),
    getOrLoad: (key, loader, options) => current().getOrLoad(key, loader, options),
    mitigation: (key) => current().mitigation(key),
    stats: () => current().stats(),
    close,
  }
}
