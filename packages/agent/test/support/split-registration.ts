import { createNames } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { demoteRegistry, publishRegistry } from '../../src/testing.js'
import { waitFor } from './helpers.js'

/** Registering keys split (over 4 shards) and demoting them, each resolving once the agent serving a client has. */
export interface SplitRegistration {
  split(keys: string[]): Promise<void>
  demote(keys: string[]): Promise<void>
}

/** Registration in `namespace` through `plain`; `mitigation` is the agent's view (`client.heatsink.mitigation`). */
export function splitRegistration(
  plain: Redis | Cluster,
  namespace: string,
  mitigation: (key: string) => string | undefined,
): SplitRegistration {
  const names = createNames(namespace)
  return {
    async split(keys) {
      const entries = keys.map((key) => ({ key, mitigation: 'split' as const, splitFactor: 4 }))
      await publishRegistry(plain, names, ...entries)
      await waitFor(() => keys.every((key) => mitigation(key) === 'split'), 'the split registration', 5000)
    },
    async demote(keys) {
      await demoteRegistry(plain, names, ...keys)
      await waitFor(() => keys.every((key) => mitigation(key) === undefined), 'the demotion', 5000)
    },
  }
}
