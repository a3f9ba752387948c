import { fillChannel } from '@heatsink/stampede'
import { type Cluster, Redis } from 'ioredis'
import { Agent } from './agent.js'
import { assertRedisClient, isClusterClient } from './client-shape.js'
import { ClusterTracking } from './cluster-tracking.js'
import { OwnedConnections, roleOptions } from './connections.js'
import { DatabaseMarker } from './database-marker.js'
import { InvalidAgentOptionError } from './errors.js'
import { type AgentOptions, type ResolvedOptions, resolveOptions } from './options.js'
import { type MessageHandler, Subscriber } from './subscriber.js'
import {
  type InvalidationChannels,
  StandaloneTracking,
  TRACKING_CHANNEL,
  TrackedConnection,
} from './tracking.js'

/**
 * Creates an agent on a Redis URL (the agent owns that client) or on an ioredis Redis or Cluster (left open),
 * from any copy of ioredis 5 or 6.
 */
export function createAgent(options: AgentOptions<Redis> & { redis: string | Redis }): Agent<Redis>
export function createAgent<C extends Redis | Cluster>(options: AgentOptions<C>): Agent<C>
export function createAgent(options: AgentOptions): Agent {
  const resolved = resolveOptions(options)
  const connections = new OwnedConnections(resolved.log)
  const data =
    typeof options.redis === 'string' ? connections.add(new Redis(options.redis), 'data') : options.redis
  assertRedisClient(data)
  // The agent's own connections duplicate the client's options; a key prefix would move its stream and
  // snapshot keys and make tracking messages name keys the caller never used.
  if (data.options.keyPrefix) {
    throw new InvalidAgentOptionError(
      'redis',
      'clients with a keyPrefix are not supported; prefix keys yourself',
    )
  }
  const reportConnection = connections.add(openReportConnection(data, resolved), 'report')
  return new Agent({
    data,
    options: resolved,
    connections,
    reportConnection,
    openChannels: (onMessage) => openChannels(data, resolved, connections, onMessage),
  })
}

function openReportConnection(data: Redis | Cluster, options: ResolvedOptions): Redis | Cluster {
  const own = roleOptions('report', options.agentId, { commandTimeout: options.reportTimeoutMs })
  if (!isClusterClient(data)) return data.duplicate(own)
  return data.duplicate([], {
    enableOfflineQueue: false,
    lazyConnect: false,
    redisOptions: { ...data.options.redisOptions, ...own },
  })
}

function openChannels(
  data: Redis | Cluster,
  options: ResolvedOptions,
  connections: OwnedConnections,
  onMessage: MessageHandler,
): InvalidationChannels {
  const { names, agentId, log } = options
  // The stampede guard's lease announcements ride on the agent's subscriber, which resubscribes every channel
  // after a reconnect (with its new CLIENT ID first); the agent hands them to the guard.
  const channels = [names.registryChannel, names.invalidationChannel, names.tuningChannel, fillChannel(names)]
  if (isClusterClient(data)) {
    return new ClusterTracking(data, { channels, onMessage, connections, agentId, log })
  }
  const sub = connections.add(data.duplicate(roleOptions('sub', agentId)), 'sub')
  const track = connections.add(data.duplicate(roleOptions('track', agentId)), 'track')
  const subscriber = new Subscriber(sub, [TRACKING_CHANNEL, ...channels], onMessage, log)
  // A database SWAPDB replaced is handled as Redis's own flush notification (a null invalidation).
  const swapped = () => {
    log.info({ agentId }, 'database swapped, L1 emptied')
    onMessage(TRACKING_CHANNEL, null)
  }
  const marker = new DatabaseMarker(names.databaseMarkerKey, options.clock, swapped, log)
  return new StandaloneTracking(subscriber, new TrackedConnection(track, subscriber, log, marker))
}
