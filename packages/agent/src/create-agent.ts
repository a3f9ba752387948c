import { isSentinelUrl, parseSentinelUrl } from '@heatsink/protocol'
import { fillChannel } from '@heatsink/stampede'
import { type Cluster, Redis, type RedisOptions } from 'ioredis'
import { Agent } from './agent.js'
import { ClusterTracking } from './channels/cluster-tracking.js'
import { ControlChannels } from './channels/control-channels.js'
import { DatabaseMarker } from './channels/database-marker.js'
import { type MessageHandler, Subscriber } from './channels/subscriber.js'
import {
  type InvalidationChannels,
  StandaloneTracking,
  TRACKING_CHANNEL,
  TrackedConnection,
} from './channels/tracking.js'
import { assertRedisClient, isClusterClient } from './connections/client-shape.js'
import { type ConnectionRole, OwnedConnections, roleOptions } from './connections/connections.js'
import { checkStandaloneControl } from './connections/control-check.js'
import { FollowingRedis } from './connections/following-redis.js'
import { followPrimary, followReads } from './connections/sentinel-options.js'
import { InvalidAgentOptionError } from './errors.js'
import { PendingFills } from './l1/pending-fills.js'
import type { AgentOptions, ResolvedOptions } from './options/agent-options.js'
import { resolveOptions } from './options/resolve-options.js'

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
    ...(control !== undefined &&
      !isClusterClient(control) && { controlCheck: checkStandaloneControl(control) }),
  })
}

// A control client given (a URL was checked with the other options): before any connection is opened, so that
// a bad one leaves nothing open.
function checkControlClient(given: AgentOptions['control']): void {
  if (given === undefined || typeof given === 'string') return
  assertRedisClient(given, 'control')
  // A Cluster's prefix may be its own option or its nodes'.
  const prefix = isClusterClient(given)
    ? (given.options.keyPrefix ?? given.options.redisOptions?.keyPrefix)
    : given.options.keyPrefix
  if (prefix) {
    throw new InvalidAgentOptionError('control', 'clients with a keyPrefix are not supported')
  }
}

// The control Redis's command connection, or undefined when the data Redis is also the control Redis.
function openControl(
  given: AgentOptions['control'],
  options: ResolvedOptions,
  connections: OwnedConnections,
): Redis | Cluster | undefined {
  if (typeof given !== 'string') return given
  const own = roleOptions('control', options.agentId)
  if (!isSentinelUrl(given)) return connections.add(new Redis(given, own), 'control')
  // Heatsink's own state follows the control primary at once (failoverDetector): nothing there has to stay with
  // the application's writes, and a report or registry event on a primary being demoted would be lost.
  const sentinel = parseSentinelUrl(given)
  return connections.add(new FollowingRedis({ ...sentinel, ...own, ...followPrimary(sentinel) }), 'control')
}

function openReportConnection(on: Redis | Cluster, options: ResolvedOptions): Redis | Cluster {
  const own = roleOptions('report', options.agentId)
  if (!isClusterClient(on)) return on.duplicate({ ...own, ...followPrimary(on.options) })
  return on.duplicate([], {
    enableOfflineQueue: false,
    lazyConnect: false,
    redisOptions: { ...on.options.redisOptions, ...own },
  })
}

function openChannels(
  data: Redis | Cluster,
  control: Redis | Cluster | undefined,
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
        // The client's own reads go to replicas: L1 fills do too, so turning hot keeps the freshness it had.
        fillFromReplicas: data.options.scaleReads === 'slave',
      })
    : openStandaloneTracking(data, onData, options, connections, onMessage)
  if (control === undefined) return tracking
  if (isClusterClient(control)) {
    // PUBLISH on a Cluster reaches every node: the channels ride on one master's subscriber, which ClusterTracking
    // moves to another master when that one fails (its tracking connections there track nothing: no fill reads).
    const onControl = new ClusterTracking(control, {
      channels,
      onMessage,
      connections,
      agentId,
      log,
      pendingFills: () => new PendingFills(options.clock, options.l1.fillTimeoutMs),
    })
    return new ControlChannels(tracking, onControl)
  }
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
  const sub = connections.add(data.duplicate(readingRole('sub', data, agentId)), 'sub')
  const track = connections.add(data.duplicate(readingRole('track', data, agentId)), 'track')
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

// L1's subscriber and tracking connection read where the client they copy reads (see followReads).
function readingRole(role: ConnectionRole, copied: Redis, agentId: string): Partial<RedisOptions> {
  return { ...roleOptions(role, agentId), ...followReads(copied.options) }
}
