import type { Cluster, Redis } from 'ioredis'
import { InvalidAgentOptionError } from '../errors.js'

// What the agent calls on a client it is given: duplicate() for its own report, subscriber and tracking
// connections, sendCommand() through the front door, on() for their events, disconnect() when it closes them.
const CLIENT_METHODS = ['duplicate', 'sendCommand', 'disconnect', 'on'] as const
// A Cluster's tracking follows its masters (ClusterTracking).
const CLUSTER_METHODS = ['nodes'] as const

const EXPECTED = 'must be a Redis URL, or an ioredis Redis or Cluster client'

/**
 * Checks that `value` is an ioredis Redis or Cluster by what it can do, as BullMQ's isRedisInstance does, not
 * by `instanceof`: an application's ioredis is often another copy than the one this package resolves (another
 * version, a bundler's copy), and `instanceof` fails across copies. Throws InvalidAgentOptionError naming
 * `option` and what the object lacks.
 */
export function assertRedisClient(value: unknown, option = 'redis'): asserts value is Redis | Cluster {
  if (typeof value !== 'object' || value === null) {
    throw new InvalidAgentOptionError(option, `${EXPECTED}, got ${value === null ? 'null' : typeof value}`)
  }
  const client = value as Record<string, unknown>
  const missing: string[] = CLIENT_METHODS.filter((name) => typeof client[name] !== 'function').map(
    (name) => `${name}()`,
  )
  if (typeof client['options'] !== 'object' || client['options'] === null) missing.push('options')
  // ioredis sets isCluster on every Redis (false) and Cluster (true); it is how the agent tells them apart.
  if (typeof client['isCluster'] !== 'boolean') missing.push('isCluster')
  else if (client['isCluster']) {
    for (const name of CLUSTER_METHODS) if (typeof client[name] !== 'function') missing.push(`${name}()`)
  }
  if (missing.length > 0) {
    const kind = client['isCluster'] === true ? 'a Cluster' : 'the object'
    throw new InvalidAgentOptionError(option, `${EXPECTED}; ${kind} lacks ${missing.join(', ')}`)
  }
}

/** True for an ioredis Cluster, from any copy of ioredis. */
export function isClusterClient(client: Redis | Cluster): client is Cluster {
  return client.isCluster
}
