import { createAgent, Redis as DropIn, type HeatsinkOptions } from '@heatsink/agent'
import type { Mitigation } from '@heatsink/protocol'
import { createProxy } from '@heatsink/proxy'
import { Redis } from 'ioredis'

/** One way into the agent's L1, as an application uses it: reads of a key, and what the agent thinks of it. */
export interface FrontDoor {
  readonly name: string
  read(key: string): Promise<unknown>
  mitigation(key: string): Mitigation | undefined
  /** Reads its agent's L1 did not answer at once (they waited on a fill). */
  l1Misses(): number
  close(): Promise<unknown>
}

/** The names of the three front doors, in the order frontDoors opens them. */
export const FRONT_DOORS = ['drop-in', 'proxy', 'createAgent'] as const

/**
 * The three front doors on `url`, each its own agent with `heatsink`'s options: the ioredis drop-in, an ioredis
 * client of the proxy, and createAgent's own API.
 */
export async function frontDoors(url: string, heatsink: HeatsinkOptions): Promise<FrontDoor[]> {
  const dropIn = new DropIn(url, { heatsink })
  const { proxy, port } = await createProxy({ backend: url, port: 0, heatsink })
  const throughProxy = new Redis({ port, host: '127.0.0.1' })
  const agent = createAgent({ ...heatsink, redis: url })
  await Promise.all([dropIn.heatsink.ready(), proxy.agent.ready(), agent.ready()])
  return [
    {
      name: 'drop-in',
      read: (key) => dropIn.get(key),
      mitigation: (key) => dropIn.heatsink.mitigation(key),
      l1Misses: () => dropIn.heatsink.stats().l1Misses,
      close: () => dropIn.quit(),
    },
    {
      name: 'proxy',
      read: (key) => throughProxy.get(key),
      mitigation: (key) => proxy.agent.mitigation(key),
      l1Misses: () => proxy.agent.stats().l1Misses,
      close: async () => {
        throughProxy.disconnect()
        await proxy.close(1000)
      },
    },
    {
      name: 'createAgent',
      read: (key) => agent.get(key),
      mitigation: (key) => agent.mitigation(key),
      l1Misses: () => agent.stats().l1Misses,
      close: () => agent.close(),
    },
  ]
}
