import type { Cluster, Redis } from 'ioredis'
import type { Agent } from '../agent.js'
import { createAgent } from '../create-agent.js'
import type { AgentOptions } from '../options/agent-options.js'
import { checkHeatsinkOptions } from '../options/resolve-options.js'

/** Heatsink's options inside ioredis's: everything createAgent takes but the client. */
export type HeatsinkOptions = Omit<AgentOptions, 'redis'>

/** One process agent, its own data connection, and the clients that route through it. */
interface Shared {
  readonly agent: Agent
  readonly internal: Redis | Cluster
  readonly clients: Set<object>
}

// One agent per Redis deployment and namespace, however many clients a process opens (duplicate(), BullMQ's
// connections, a client per module): one sketch, one report stream, one L1, one set of connections.
const agents = new Map<string, Shared>()

/**
 * The process agent for `deployment` (an address and namespace), created on first use on a data connection of
 * its own from `connect` (none of its traffic rides on the application's), and kept until its last client
 * detaches. Options come from the first client: later clients of the same deployment share its agent.
 */
export function attachAgent(
  client: object,
  deployment: string,
  heatsink: HeatsinkOptions,
  connect: () => Redis | Cluster,
): Agent {
  checkHeatsinkOptions(heatsink)
  const id = `${deployment}/${heatsink.namespace ?? 'heatsink'}`
  let shared = agents.get(id)
  if (shared === undefined) {
    const internal = connect()
    internal.on('error', () => {})
    let agent: Agent
    try {
      agent = createAgent({ ...heatsink, redis: internal }) as Agent
    } catch (error) {
      // Bad options: nothing of the agent may stay open.
      internal.disconnect()
      throw error
    }
    shared = { agent, internal, clients: new Set() }
    agents.set(id, shared)
  }
  shared.clients.add(client)
  return shared.agent
}

/** Detaches `client`; the last client to leave closes the agent and its connections. */
export async function detachAgent(client: object, agent: Agent): Promise<void> {
  for (const [id, shared] of agents) {
    if (shared.agent !== agent || !shared.clients.delete(client)) continue
    if (shared.clients.size > 0) return
    agents.delete(id)
    await agent.close()
    shared.internal.disconnect()
    return
  }
}

/** ioredis options without what the agent's own connections must not inherit. */
export function ownConnectionOptions<T extends object>(options: T): T {
  // Heatsink's names are absolute (no key prefix), and the agent's connections are plain ioredis.
  const {
    keyPrefix: _prefix,
    heatsink: _heatsink,
    ...plain
  } = options as T & {
    keyPrefix?: unknown
    heatsink?: unknown
  }
  return plain as T
}

/** The name of an agent's own data connection in CLIENT LIST: by namespace, so operators can tell agents apart. */
export function dataConnectionName(heatsink: HeatsinkOptions | undefined): string {
  return `heatsink:data:${(heatsink?.namespace ?? 'heatsink').replace(/[^A-Za-z0-9_.:-]/g, '_')}`
}
