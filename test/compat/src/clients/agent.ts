import * as agentModule from '@heatsink/agent'
import { Command, type Cluster as IOCluster, type Redis as IORedis } from 'ioredis'
import { type DefaultServer, withDefaultServer } from '../private-server.js'
import type { CompatClient } from './compat-client.js'

/*
 * @heatsink/agent's drop-in clients: `import { Redis, Cluster } from '@heatsink/agent'`, subclasses of ioredis's
 * with the same constructors, `heatsink: {...}` options inside the ioredis options object, and a `heatsink`
 * property on each instance. Written against that announced interface; the module is read through the shape
 * below so this file type-checks before (and after) those exports exist.
 */

/** What these tests use of `redis.heatsink`. */
export interface HeatsinkHandle {
  /** Resolves once the agent has loaded the registry and subscribed. */
  ready(): Promise<void>
  /** The mitigation the agent's registry view holds for a key, as Agent#mitigation answers it. */
  mitigation(key: string): string | undefined
}

/** An instance of the agent's Redis. */
export type AgentRedis = IORedis & { readonly heatsink: HeatsinkHandle }

interface AgentExports {
  readonly Redis?: new (...args: unknown[]) => AgentRedis
  readonly Cluster?: typeof IOCluster
}

export function agentClient(server: DefaultServer): CompatClient {
  const { Redis: AgentRedisClass, Cluster } = agentModule as AgentExports
  if (AgentRedisClass === undefined || Cluster === undefined) {
    throw new Error(
      '@heatsink/agent does not export Redis and Cluster yet: keep the compat-agent projects disabled ' +
        '(ENABLED_CLIENTS in test/compat/projects.ts) until it does',
    )
  }
  class Redis extends AgentRedisClass {
    constructor(...args: unknown[]) {
      super(...withDefaultServer(args, server))
    }
  }
  // Command comes from the ioredis this package resolves, the same copy (ioredis 5.11.1) the agent extends.
  return { Redis: Redis as unknown as typeof IORedis, Cluster, Command }
}
