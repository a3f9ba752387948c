import { fillChannel } from '@heatsink/stampede'
import { type Cluster, Redis, type RedisOptions } from 'ioredis'
import { Agent } from './agent.js'
import { assertRedisClient, isClusterClient } from './client-shape.js'
import { ClusterTracking } from './cluster-tracking.js'
import { type ConnectionRole, OwnedConnections, roleOptions } from './connections.js'
import { ControlChannels } from './control-channels.js'
import { DatabaseMarker } from './database-marker.js'
import { InvalidAgentOptionError } from './errors.js'
import { type AgentOptions, type ResolvedOptions, resolveOptions } from './options.js'
import { PendingFills } from './pending-fills.js'
import { followPrimary } from './sentinel-options.js'
import { type MessageHandler, Subscriber } from './subscriber.js'
import {
  type InvalidationChannels,
  StandaloneTracking,
  TRACKING_CHANNEL,
  TrackedConnection,
} from './tracking.js'

/**
 * Creates an agent on a Redis URL (the agent owns that client) or on an ioredis Redis or Cluster (left open),
 * from any copy of ioredis 5 or 6; with `control`, Heatsink's own state goes to that Redis instead.
 */
export function createAgent(options: AgentOptions<Redis> & { redis: string | Redis }): Agent<Redis>
export function createAgent<C extends Redis | Cluster>(options: AgentOptions<C>): Agent<C>
export function createAgent(options: AgentOptions): Agent {
  const resolved = resolveOptions(options)
  checkControlClient(options.control)
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
  const control = openControl(options.control, resolved, connections)
  const reportConnection = connections.add(openReportConnection(control ?? data, resolved), 'report')
  return new Agent({
    data,
    control,
    options: resolved,
    connections,
    reportConnection,
    openChannels: (onMessage) => openChannels(data, control, resolved, connections, onMessage),
  })
}

// A control client given (a URL was checked with the other options): before any connection is opened, so that
// a bad one leaves nothing open.
function checkControlClient(given: AgentOptions['control']): void {
  if (given === undefined || typeof given === 'string') return
  assertRedisClient(given, 'control')
  if (isClusterClient(given)) {
    throw new InvalidAgentOptionError(
      'control',
      'must be one standalone Redis (a URL or an ioredis Redis), not a Cluster',
    )
  }
  if (given.options.keyPrefix) {
    throw new InvalidAgentOptionError('control', 'clients with a keyPrefix are not supported')
  }
}

// The control Redis's command connection, or undefined when the data Redis is also the control Redis.
function openControl(
  given: AgentOptions['control'],
  options: ResolvedOptions,
  connections: OwnedConnections,
): Redis | undefined {
  if (typeof given !== 'string') return given
  return connections.add(new Redis(given, roleOptions('control', options.agentId)), 'control')
}

function openReportConnection(on: Redis | Cluster, options: ResolvedOptions): Redis | Cluster {
  const own = roleOptions('report', options.agentId, { commandTimeout: options.reportTimeoutMs })
  if (!isClusterClient(on)) return on.duplicate({ ...own, ...followPrimary(on.options) })
  return on.duplicate([], {
    enableOfflineQueue: false,
    lazyConnect: false,
    redisOptions: { ...on.options.redisOptions, ...own },
  })
}

function openChannels(
  data: Redis | Cluster,
  control: Redis | undefined,
  options: ResolvedOptions,
  connections: OwnedConnections,
  onMessage: MessageHandler,
): InvalidationChannels {
  const { names, agentId, log } = options
  // The stampede guard's lease announcements ride on the agent's subscriber, which resubscribes every channel
  // after a reconnect (with its new CLIENT ID first); the agent hands them to the guard.
  const channels = [names.registryChannel, names.invalidationChannel, names.tuningChannel, fillChannel(names)]
  // With a control Redis, the data Redis's subscribers carry the tracking channel alone.
  const onData = control === undefined ? channels : []
  const tracking = isClusterClient(data)
    ? new ClusterTracking(data, {
        channels: onData,
        onMessage,
        connections,
        agentId,
        log,
        pendingFills: () => new PendingFills(options.clock, options.l1.fillTimeoutMs),
      })
    : openStandaloneTracking(data, onData, options, connections, onMessage)
  if (control === undefined) return tracking
  const sub = connections.add(control.duplicate(ownRole('sub', control, agentId)), 'control-sub')
  return new ControlChannels(tracking, new Subscriber(sub, channels, onMessage, log))
}

function openStandaloneTracking(
  data: Redis,
  channels: readonly string[],
  options: ResolvedOptions,
  connections: OwnedConnections,
  onMessage: MessageHandler,
): StandaloneTracking {
  const { names, agentId, log } = options
  const sub = connections.add(data.duplicate(ownRole('sub', data, agentId)), 'sub')
  const track = connections.add(data.duplicate(ownRole('track', data, agentId)), 'track')
  const subscriber = new Subscriber(sub, [TRACKING_CHANNEL, ...channels], onMessage, log)
  // A database SWAPDB replaced is handled as Redis's own flush notification (a null invalidation).
  const swapped = () => {
    log.info({ agentId }, 'database swapped, L1 emptied')
    onMessage(TRACKING_CHANNEL, null)
  }
  const marker = new DatabaseMarker(names.databaseMarkerKey, options.clock, swapped, log)
  const fills = new PendingFills(options.clock, options.l1.fillTimeoutMs)
  return new StandaloneTracking(subscriber, new TrackedConnection(track, subscriber, fills, log, marker))
}

// The agent's own connections on a Sentinel deployment follow its primary, whatever the client they copy reads.
function ownRole(role: ConnectionRole, copied: Redis, agentId: string): Partial<RedisOptions> {
  return { ...roleOptions(role, agentId), ...followPrimary(copied.options) }
}
