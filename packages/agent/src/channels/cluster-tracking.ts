import { redisClusterSlot } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { type OwnedConnections, roleOptions } from '../connections/connections.js'
import type { PendingFills } from '../l1/pending-fills.js'
import type { ReplyFill } from '../l1/reply-cache.js'
import type { AgentLogger } from '../options/agent-options.js'
import { ChannelState } from './channel-state.js'
import { type MessageHandler, Subscriber } from './subscriber.js'
import { type InvalidationChannels, TRACKING_CHANNEL, TrackedConnection } from './tracking.js'

// Events after which the slot map may differ from the one the per-master connections were built for.
const TOPOLOGY_EVENTS = ['ready', 'refresh', '+node', '-node'] as const

interface Master {
  readonly connections: Redis[]
  readonly subscriber: Subscriber
  readonly tracked: TrackedConnection
}

/** What ClusterTracking needs besides the cluster. */
export interface ClusterTrackingOptions {
  /** Channels besides tracking that one node's subscriber carries (registry, invalidation); PUBLISH reaches every node. */
  channels: readonly string[]
  onMessage: MessageHandler
  connections: OwnedConnections
  agentId: string
  log: AgentLogger
  /** What watches the fills of one master's tracked connection (a new one per connection). */
  pendingFills: () => PendingFills
  /**
   * Fill from each master's first replica (READONLY, tracking on that replica) instead of the master: for a client
   * whose own reads go to replicas (`scaleReads: 'slave'`), so a key turning hot keeps the freshness it had.
   */
  fillFromReplicas?: boolean
}

/**
 * Tracking on a Redis Cluster. Tracking is per server, so every master gets its own tracked connection and a
 * subscriber on the same server to redirect to; a fill goes to the master that owns the key's slot, as the
 * cluster's slot map says. The registry and invalidation channels ride on the first master's subscriber.
 *
 * A master's tracking covers only the slots it serves. When the slot map changes (ioredis 'refresh' with a
 * different map, '+node', '-node') or a fill is answered MOVED, what L1 holds can no longer be vouched for:
 * the state goes down (the agent empties L1) and the per-master connections are rebuilt for the new map.
 */
export class ClusterTracking implements InvalidationChannels {
  readonly state = new ChannelState()
  readonly #cluster: Cluster
  readonly #options: ClusterTrackingOptions
  #masters = new Map<string, Master>()
  #fingerprint = ''
  #build = 0
  #refreshing: NodeJS.Timeout | undefined
  #closed = false

  constructor(cluster: Cluster, options: ClusterTrackingOptions) {
    this.#cluster = cluster
    this.#options = options
  }

  start(): void {
    for (const event of TOPOLOGY_EVENTS) this.#cluster.on(event, this.#check)
    if (this.#cluster.status === 'ready') this.#check()
    else if (this.#cluster.status === 'wait') this.#cluster.connect().catch(() => {})
  }

  fillReply(key: string, command: string, args: readonly unknown[]): Promise<ReplyFill> {
    return this.#onOwner(key, (tracked) => tracked.fillReply(key, command, args))
  }

  barrier(): Promise<unknown> {
    return Promise.all([...this.#masters.values()].map((master) => master.subscriber.ping()))
  }

  #onOwner<T>(key: string, read: (tracked: TrackedConnection) => Promise<T>): Promise<T> {
    const owner = this.#filler(this.#cluster.slots[redisClusterSlot(key)])
    const master = owner === undefined ? undefined : this.#masters.get(owner)
    if (master === undefined || !master.tracked.state.up) {
      return Promise.reject(new Error(`no tracked connection for the slot of ${JSON.stringify(key)}`))
    }
    // ASK (a slot being migrated) only fails this fill: the key's old copy was deleted by MIGRATE, which
    // tracking reported, and the read goes through the cluster instead. MOVED means the map changed.
    return read(master.tracked).catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith('MOVED ')) this.#moved(key, error.message)
      throw error
    })
  }

  async close(): Promise<void> {
    for (const event of TOPOLOGY_EVENTS) this.#cluster.off(event, this.#check)
    this.#closed = true
    this.#refreshWhileDown(false)
    this.#build++
    this.state.set(false)
    const masters = [...this.#masters.values()]
    this.#masters = new Map()
    await Promise.all(masters.map((master) => this.#closeMaster(master)))
  }

  // The slot moved under us: stop vouching now, and rebuild once ioredis has the new map.
  #moved(key: string, reply: string): void {
    this.#options.log.info({ key, reply }, 'slot moved, emptying L1')
    this.#fingerprint = ''
    this.state.set(false)
    this.#cluster.refreshSlotsCache()
  }

  readonly #check = (): void => {
    if (this.#closed || this.#cluster.slots.length === 0) return
    const fingerprint = slotMapFingerprint(this.#cluster.slots.map((nodes) => this.#filler(nodes) ?? '?'))
    if (fingerprint === this.#fingerprint) return
    this.#rebuild(fingerprint)
  }

  #rebuild(fingerprint: string): void {
    const build = ++this.#build
    if (this.#fingerprint !== '') this.#options.log.info({}, 'cluster topology changed, emptying L1')
    this.#fingerprint = fingerprint
    this.state.set(false)
    for (const master of this.#masters.values()) void this.#closeMaster(master)
    this.#masters = new Map()

    const owners = [...new Set(this.#cluster.slots.map((nodes) => this.#filler(nodes)))].filter(
      (owner): owner is string => owner !== undefined,
    )
    owners.sort()
    const nodes = new Map(
      this.#cluster.nodes('all').map((node) => [`${node.options.host}:${node.options.port}`, node]),
    )
    for (const [index, owner] of owners.entries()) {
      const node = nodes.get(owner)
      if (node === undefined) {
        // A client seeded with one node learns the slot map before it has connections to the other masters:
        // build what can be built, and build again on the next '+node' or 'refresh', whatever the map says then.
        this.#options.log.debug({ owner }, 'no connection yet for a master in the slot map')
        this.#fingerprint = ''
        continue
      }
      const master = this.#openMaster(node, index === 0)
      master.tracked.state.watch(() => {
        if (build === this.#build) this.#updateState()
      })
      this.#masters.set(owner, master)
      master.subscriber.start()
      master.tracked.start()
    }
  }

  #openMaster(node: Redis, carriesChannels: boolean): Master {
    const { connections, agentId, log, onMessage, pendingFills } = this.#options
    // READONLY on a replica lets it answer reads of its master's slots (a master ignores it).
    const readOnly = { readOnly: this.#options.fillFromReplicas === true }
    const sub = connections.add(node.duplicate(roleOptions('sub', agentId, readOnly)), 'sub')
    const track = connections.add(node.duplicate(roleOptions('track', agentId, readOnly)), 'track')
    const channels = carriesChannels ? [TRACKING_CHANNEL, ...this.#options.channels] : [TRACKING_CHANNEL]
    const subscriber = new Subscriber(sub, channels, onMessage, log)
    const tracked = new TrackedConnection(track, subscriber, pendingFills(), log)
    return { connections: [sub, track], subscriber, tracked }
  }

  async #closeMaster(master: Master): Promise<void> {
    await master.subscriber.close()
    await Promise.all(master.connections.map((connection) => this.#options.connections.close(connection)))
  }

  // The node a slot's fills are read from: its master, or with fillFromReplicas its first replica when it has one.
  #filler(nodes: readonly string[] | undefined): string | undefined {
    return this.#options.fillFromReplicas === true ? (nodes?.[1] ?? nodes?.[0]) : nodes?.[0]
  }

  #updateState(): void {
    let up = this.#masters.size > 0
    for (const master of this.#masters.values()) up &&= master.tracked.state.up
    this.state.set(up)
    this.#refreshWhileDown(!up && this.#masters.size > 0)
  }

  // A master that crashed sends no event when its replica takes over, and the agent's own cluster may have no
  // traffic on its slots to be told MOVED (L1 does not fill while down): while a master's channels are down the
  // slot map is read again every 100 ms, so that the new master's connections are built once the map names it.
  #refreshWhileDown(down: boolean): void {
    if (down && !this.#closed) {
      this.#refreshing ??= setInterval(() => this.#cluster.refreshSlotsCache(), 100).unref()
      return
    }
    clearInterval(this.#refreshing)
    this.#refreshing = undefined
  }
}

/** The slot map as `start-end=node` runs of the node each slot is filled from: equal strings mean the same nodes. */
function slotMapFingerprint(slots: readonly string[]): string {
  const runs: string[] = []
  let start = 0
  for (let slot = 1; slot <= slots.length; slot++) {
    if (slot < slots.length && slots[slot] === slots[start]) continue
    runs.push(`${start}-${slot - 1}=${slots[start]}`)
    start = slot
  }
  return runs.join(';')
}
