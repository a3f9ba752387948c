import { CommandForm } from '@heatsink/commands'
import type { Mitigation } from '@heatsink/protocol'
import { TumblingWindows, WindowRecorder } from '@heatsink/sketch'
import { createSplitter, type Reconciler, type Splitter } from '@heatsink/split'
import {
  createStampedeGuard,
  FillAnnouncer,
  fillChannel,
  GuardClosedError,
  type StampedeGuard,
  unwrapStored,
} from '@heatsink/stampede'
import type { Cluster, Redis } from 'ioredis'
import { CoalesceStrategy } from './coalesce-strategy.js'
import type { OwnedConnections } from './connections.js'
import { CommandRouter } from './core/command-router.js'
import { ReplyCache } from './core/reply-cache.js'
import { AgentClosedError, AgentNotReadyError, FillAbandonedError } from './errors.js'
import { AgentEvents } from './events/agent-events.js'
import { type Invalidate, InvalidationBus } from './invalidation-bus.js'
import { L1Cache } from './l1-cache.js'
import { MultiGet } from './multi-get.js'
import { observedLoader } from './observed-loader.js'
import { checkLoadOptions } from './options/check-load-options.js'
import type { ResolvedOptions } from './options.js'
import { type HotKey, RegistryView } from './registry-view.js'
import { ReplicaReadStrategy } from './replicas/replica-read-strategy.js'
import { ReplicaReads } from './replicas/replica-reads.js'
import { DEFAULT_ERROR_SAMPLING, Reporter } from './reporter.js'
import { ReportingTuning } from './reporting-tuning.js'
import { SplitStrategy } from './split-strategy.js'
import { AgentCounters, type AgentStats, type InvalidationSource, statsSnapshot } from './stats.js'
import {
  type FetchThrough,
  type Loader,
  type LoadOptions,
  LocalCacheStrategy,
  type ReadThrough,
  type StrategyTable,
} from './strategies.js'
import type { MessageHandler } from './subscriber.js'
import { AgentTelemetry } from './telemetry/agent-telemetry.js'
import { type InvalidationChannels, TRACKING_CHANNEL } from './tracking.js'
import { WrappedCommands } from './wrapped-commands.js'

/** What createAgent hands the agent: the data client, resolved options and the connections it opened. */
export interface AgentParts<C extends Redis | Cluster> {
  data: C
  /** The control Redis's command connection; undefined when the data Redis is also the control Redis. */
  control: Redis | undefined
  options: ResolvedOptions
  connections: OwnedConnections
  reportConnection: Redis | Cluster
  openChannels(onMessage: MessageHandler): InvalidationChannels
}

/**
 * The Heatsink agent of one process: detection, reporting, the registry view, L1, coalescing, split keys and
 * invalidation, with the data-plane core (`router`) that the ioredis front door and the proxy hand every command.
 * The object createAgent returns also answers ioredis's get, set, del, mget and the counter, set and sorted-set
 * commands itself (WrappedCommands), plus getOrLoad; every other command stays on `agent.redis`.
 */
export class Agent<C extends Redis | Cluster = Redis | Cluster> {
  /** The client the agent wraps, for every command it does not. */
  readonly redis: C
  readonly agentId: string
  readonly #data: Redis
  /** Where Heatsink's own state is read and announced: the control Redis, or the data Redis without one. */
  readonly #control: Redis
  readonly #options: ResolvedOptions
  readonly #counters = new AgentCounters()
  readonly #recorder: WindowRecorder
  readonly #windows: TumblingWindows
  readonly #view: RegistryView
  readonly #l1: L1Cache
  readonly #replies: ReplyCache
  /**
   * The data-plane core for clients that hand the agent every command (the ioredis front door, the proxy).
   * @internal
   */
  readonly router: CommandRouter
  readonly #strategies: StrategyTable
  readonly #channels: InvalidationChannels
  readonly #bus: InvalidationBus
  readonly #reporter: Reporter
  readonly #tuning: ReportingTuning
  readonly #multiGet: MultiGet
  readonly #guard: StampedeGuard
  readonly #splitter: Splitter
  readonly #split: SplitStrategy
  readonly #reconciler: Reconciler
  readonly #fillChannel: string
  readonly #connections: OwnedConnections
  readonly #replicaReads: ReplicaReads
  readonly #events: AgentEvents
  readonly #telemetry: AgentTelemetry
  readonly #whenReady: Promise<void>
  #markReady: () => void = () => {}
  #localCacheKeys = 0
  #readyCall: Promise<void> | undefined
  #closing: Promise<void> | undefined

  constructor(parts: AgentParts<C>) {
    const options = parts.options
    const { names, clock, log } = options
    this.redis = parts.data
    this.agentId = options.agentId
    this.#data = parts.data as unknown as Redis
    this.#control = parts.control ?? this.#data
    this.#options = options
    this.#connections = parts.connections
    this.#whenReady = new Promise((resolve) => {
      this.#markReady = resolve
    })
    this.#events = new AgentEvents(options.agentId)
    this.#l1 = new L1Cache(options.l1, clock, this.#counters, this.#events, 'values')
    this.#replies = new ReplyCache(options.l1, clock, this.#counters, this.#events, 'replies')
    this.#guard = createStampedeGuard({
      redis: parts.data,
      control: parts.control,
      subscriber: false,
      names,
      agentId: options.agentId,
      clock,
      random: options.random,
      codec: options.codec,
      ...options.stampede,
      onError: (error, { key, phase }) =>
        log.warn({ key, phase, error: (error as Error).message }, 'background load step failed'),
    })
    this.#fillChannel = fillChannel(names)
    this.#channels = parts.openChannels(this.#onMessage)
    const guard = this.#guard
    this.#splitter = createSplitter({
      redis: parts.data,
      control: parts.control,
      names,
      agentId: options.agentId,
      clock,
    })
    this.#replicaReads = new ReplicaReads({
      data: parts.data,
      names,
      agentId: options.agentId,
      maxLagMs: options.maxReplicaLagMs,
      clock,
      connections: parts.connections,
      counters: this.#counters,
    })
    this.#split = new SplitStrategy(this.#splitter, this.#fetch, log, () => clock.now())
    this.#strategies = {
      local_cache: new LocalCacheStrategy({
        l1: this.#l1,
        fill: (name) => this.#counted(this.#channels.fill(name)),
        readThrough: this.#readRegistered,
        onMiss: this.#onMiss,
        fetch: this.#fetch,
        isCurrent: (name, generation) => guard.isCurrent(name, generation),
        codec: options.codec,
        counters: this.#counters,
        log,
      }),
      split: this.#split,
      coalesce: new CoalesceStrategy({
        data: parts.data,
        generations: guard.generations,
        fetch: this.#fetch,
        onMiss: this.#onMiss,
        counters: this.#counters,
      }),
      replica_read: new ReplicaReadStrategy(this.#replicaReads, this.#readRegistered, this.#fetch),
    }
    this.#view = new RegistryView({
      readSnapshot: () => this.#control.hget(names.registrySnapshotKey, 'snapshot'),
      readVersion: () => this.#control.hget(names.registrySnapshotKey, 'version'),
      strategyFor: (mitigation) => this.#strategies[mitigation],
      onChange: (hot, before, after) => {
        if (before !== undefined) this.#strategies[before].leave(hot)
        if (after !== undefined) this.#strategies[after].enter(hot)
        if (after !== undefined) {
          this.#counters.promotions++
          this.#events.promoted(hot.key, after, before)
        } else if (before !== undefined) {
          this.#counters.demotions++
          this.#events.demoted(hot.key, before)
        }
        if (after === 'local_cache') {
          this.#replies.admit(hot.key)
          this.#localCacheKeys++
        } else if (before === 'local_cache') {
          this.#replies.retire(hot.key)
          this.#localCacheKeys--
        }
        log.info({ key: hot.key, before, after }, 'registry change')
      },
      canCheck: () => this.#channels.state.up,
      registryKey: options.registryKey,
      counters: this.#counters,
      log,
    })
    this.#multiGet = new MultiGet({
      data: this.#data,
      view: this.#view,
      readThrough: this.#readThrough,
      onMiss: this.#onMiss,
    })
    this.#bus = new InvalidationBus({
      publish: (message) => this.#control.publish(names.invalidationChannel, message),
      agentId: options.agentId,
      clock,
      invalidate: this.#invalidate,
      events: this.#events,
      counters: this.#counters,
      log,
    })
    this.#recorder = new WindowRecorder({
      // One key in 256 counted exactly beside the sketch: its error, measured at run time, goes in every report.
      errorSampling: DEFAULT_ERROR_SAMPLING,
      ...options.sketch,
      // Cold keys are counted in batches while replies are on their way, not on each request.
      deferColdKeys: true,
      reportFloor: options.fastReportFloor,
      onFloorCrossed: (key, count) => this.#reporter.onFloorCrossed(key, count),
    })
    this.#reporter = new Reporter({
      connection: parts.reportConnection,
      stream: names.reportStreamFor(options.agentId),
      agentId: options.agentId,
      recorder: this.#recorder,
      windowMs: options.windowMs,
      view: this.#view,
      loads: guard,
      shardCounts: () => this.#splitter.takeShardCounts(),
      counters: this.#counters,
      events: this.#events,
      maxPartialsPerWindow: options.maxPartialReportsPerWindow,
      fastReportFloor: options.fastReportFloor,
      clock,
      log,
    })
    this.#tuning = new ReportingTuning({
      recorder: this.#recorder,
      windowMs: options.windowMs,
      configuredFloor: options.fastReportFloor,
      registeredKeys: () => this.#view.keys(),
      now: () => clock.now(),
      registryKey: options.registryKey,
      counters: this.#counters,
      log,
    })
    this.#windows = new TumblingWindows(this.#recorder, {
      windowMs: options.windowMs,
      clock,
      onWindow: (summary) => {
        this.#reporter.onWindow(summary)
        this.#tuning.repin()
      },
    })
    const commands = new WrappedCommands({
      data: this.#data,
      leases: new FillAnnouncer(names, parts.control),
      lookup: (name) => this.#view.get(name),
      recorder: this.#recorder,
      counters: this.#counters,
      splitter: this.#splitter,
      split: this.#split,
      multiGet: this.#multiGet,
      invalidate: (name) => this.#invalidate.key(name, 'local'),
      publish: (written) => this.#bus.publish(written),
    })
    this.get = commands.get
    this.set = commands.set
    this.del = commands.del
    this.mget = commands.mget
    const split = commands.split
    this.incr = split.incr
    this.incrby = split.incrby
    this.decr = split.decr
    this.decrby = split.decrby
    this.sadd = split.sadd
    this.srem = split.srem
    this.smembers = split.smembers
    this.scard = split.scard
    this.sismember = split.sismember
    this.zadd = split.zadd
    this.zrem = split.zrem
    this.zscore = split.zscore
    this.zcard = split.zcard
    this.zrange = split.zrange
    this.zrevrange = split.zrevrange
    this.router = new CommandRouter({
      lookup: (name) => this.#view.get(name),
      recorder: this.#recorder,
      counters: this.#counters,
      cache: this.#replies,
      fill: (name, command, args) => this.#counted(this.#channels.fillReply(name, command, args)),
      invalidate: (name) => this.#invalidate.key(name, 'local'),
      invalidateAll: () => this.#invalidate.all('local'),
      barrier: () => this.#channels.barrier(),
      l1InUse: () => this.#localCacheKeys > 0,
      publish: (names) => this.#bus.publish(names),
      splitter: this.#splitter,
      splitFactor: (hot) => this.#split.factorOf(hot),
      holdSplit: (hot, n) => this.#split.hold(hot, n),
      replicaRead: (name, command, args) => this.#replicaReads.read(name, command, args),
      written: (name) => {
        if (this.#view.get(name)?.mitigation === 'replica_read') this.#replicaReads.wrote(name)
      },
    })
    // One agent at a time (under a lease) evens out shards that drifted and finishes folds others left.
    this.#reconciler = this.#splitter.startReconciler({
      intervalMs: 5000,
      keys: () => this.#split.splitKeys(),
      onError: (error) => log.warn({ error: (error as Error).message }, 'split reconciliation failed'),
    })
    this.#telemetry = new AgentTelemetry(options.agentId, names.namespace, () => ({
      l1Hits: this.#counters.l1Hits,
      l1Misses: this.#counters.l1Misses,
      l1Entries: this.#l1.size + this.#replies.size,
      l1Bytes: this.#l1.bytes + this.#replies.bytes,
      promotions: this.#counters.promotions,
      demotions: this.#counters.demotions,
      loads: this.#guard.totals().upstreamLoads,
      loadFailures: this.#counters.loadFailures,
      reportsSent: this.#counters.reportsSent,
      reportsDropped: this.#counters.reportsDropped,
    }))
    this.#channels.state.watch((up) => this.#onChannels(up))
    this.#windows.start()
    this.#view.startChecks(clock, options.registryCheckMs)
    this.#channels.start()
  }

  /** Resolves once the registry snapshot is loaded and every subscription is live; rejects after readyTimeoutMs. */
  ready(): Promise<void> {
    this.#readyCall ??= this.#waitReady().catch((error: unknown) => {
      this.#readyCall = undefined
      throw error
    })
    return this.#readyCall
  }

  /** ioredis INCR, INCRBY, DECR, DECRBY: on one random shard of a split key, else on Redis unchanged. */
  readonly incr: Redis['incr']
  readonly incrby: Redis['incrby']
  readonly decr: Redis['decr']
  readonly decrby: Redis['decrby']
  /** ioredis set commands: SADD to one shard of a split key, reads over the union of its shards. */
  readonly sadd: Redis['sadd']
  readonly srem: Redis['srem']
  readonly smembers: Redis['smembers']
  readonly scard: Redis['scard']
  readonly sismember: Redis['sismember']
  /** ioredis sorted-set commands: a split key's members spread over its shards, ranges merged in score order. */
  readonly zadd: Redis['zadd']
  readonly zrem: Redis['zrem']
  readonly zscore: Redis['zscore']
  readonly zcard: Redis['zcard']
  readonly zrange: Redis['zrange']
  readonly zrevrange: Redis['zrevrange']

  /** ioredis GET, SET, DEL and MGET, with L1, split keys and lease breaking (see WrappedCommands). */
  readonly get: Redis['get']
  readonly set: Redis['set']
  readonly del: Redis['del']
  readonly mget: Redis['mget']

  /**
   * The cached value of `key`, or `loader`'s, loaded once however many callers in however many agents ask at
   * once (see @heatsink/stampede). local_cache keys are served from L1 first. Values pass through the agent's
   * codec; callers of one load share the value it decoded or loaded, so treat it as read-only. A caller whose
   * `options.signal` fires leaves at once with its reason; the load goes on for the others (see LoadContext).
   */
  async getOrLoad<T>(key: string, loader: Loader<T>, options: LoadOptions): Promise<T> {
    checkLoadOptions(options)
    options.signal?.throwIfAborted()
    if (this.#closing !== undefined) throw new AgentClosedError()
    // Its fills write an envelope through a script: never a form a split key answers.
    this.#recorder.record(key, false, CommandForm.other)
    const counters = this.#counters
    counters.requests++
    counters.reads++
    counters.loadCalls++
    const hot = this.#view.get(key)
    try {
      if (hot !== undefined) return await hot.strategy.load(key, hot, loader, options)
      return (await this.#fetch(key, undefined, loader, options)).value
    } catch (error) {
      if (error instanceof GuardClosedError) throw new AgentClosedError({ cause: error })
      throw error
    }
  }

  /** True while some key is local_cache: until then no read can be an L1 hit, and clients need not look. */
  get servesFromL1(): boolean {
    return this.#localCacheKeys > 0
  }

  /** The key's mitigation as this agent sees the registry now. */
  mitigation(key: string): Mitigation | undefined {
    return this.#view.get(key)?.mitigation
  }

  /** The counters an operator wants; see AgentStats. */
  stats(): AgentStats {
    return statsSnapshot(this.#counters, {
      l1Entries: this.#l1.size + this.#replies.size,
      l1Bytes: this.#l1.bytes + this.#replies.bytes,
      registryVersion: this.#view.version,
      invalidationChannelUp: this.#channels.state.up,
      reportFloor: this.#tuning.reportFloor,
      watchedKeys: this.#tuning.watchedKeys,
      hotKeys: this.#view.values(),
      loads: this.#guard.totals(),
    })
  }

  /**
   * Fails getOrLoad callers still waiting (AgentClosedError), releases the leases this agent holds, sends the
   * last window's report, unsubscribes and quits what the agent opened; all of it within closeTimeoutMs, after
   * which whatever Redis has not answered is abandoned and the agent's connections are disconnected.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    // Every step that waits on Redis gets only what is left of closeTimeoutMs, so close() ends in time on a Redis
    // that stalls (a pause, a partition) too: what has not finished by then is cut off when the connections are
    // disconnected at the end.
    const deadline = Date.now() + this.#options.closeTimeoutMs
    const left = () => Math.max(0, deadline - Date.now())
    this.#view.stopChecks()
    this.#replicaReads.close()
    this.#telemetry.close()
    this.#reporter.stop()
    await Promise.all([
      within(this.#reconciler.stop(), left()),
      this.#reporter.idle(left()),
      within(this.#guard.close(), left()),
    ])
    this.#windows.stop({ flush: true })
    await this.#reporter.idle(left())
    await within(this.#channels.close(), left())
    this.#l1.clear()
    this.#replies.clear()
    await this.#connections.closeAll(left())
  }

  async #waitReady(): Promise<void> {
    if (this.#closing !== undefined) throw new AgentClosedError()
    const timeoutMs = this.#options.readyTimeoutMs
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const waitingFor = !this.#channels.state.up
          ? 'the subscriptions and tracking redirect are not live'
          : 'the registry snapshot is not loaded'
        reject(new AgentNotReadyError(timeoutMs, waitingFor, this.#connections.lastError))
      }, timeoutMs)
    })
    try {
      await Promise.race([Promise.all([this.#whenReady, this.#guard.ready()]), timedOut])
    } finally {
      clearTimeout(timer)
    }
  }

  // Channels down: L1 is emptied and stays empty. Back up: events may have been missed, so the registry is
  // reloaded, and local_cache keys are filled again.
  #onChannels(up: boolean): void {
    this.#l1.setUsable(up)
    this.#replies.setUsable(up)
    if (this.#closing !== undefined) return
    if (!up) {
      // Invalidations may be lost from now on: no load in flight may be cached.
      this.#guard.invalidateAll()
      this.#events.invalidated(null, 'channelLoss')
      this.#options.log.warn({ agentId: this.agentId }, 'invalidation channel lost, L1 emptied')
      return
    }
    this.#options.log.info({ agentId: this.agentId }, 'invalidation channels live')
    // Tuning published while the channel was down is missed; the latest is kept in a key.
    this.#control
      .get(this.#options.names.tuningKey)
      .then((text) => {
        if (text !== null) this.#tuning.receive(text)
      })
      .catch(() => {})
    this.#view
      .reload()
      .then(() => {
        if (this.#closing !== undefined || !this.#channels.state.up) return
        for (const hot of this.#view.values()) if (hot.mitigation === 'local_cache') hot.strategy.enter(hot)
        if (this.#view.loaded) this.#markReady()
      })
      .catch((error: unknown) =>
        this.#options.log.error({ error: (error as Error).message }, 'registry reload failed'),
      )
  }

  readonly #onMessage: MessageHandler = (channel, payload) => {
    const names = this.#options.names
    if (channel === TRACKING_CHANNEL) this.#bus.receiveTracking(payload)
    else if (payload === null || Array.isArray(payload)) this.#counters.badMessages++
    else if (channel === this.#fillChannel) this.#guard.onFillMessage(payload.toString())
    else if (channel === names.registryChannel) this.#view.onMessage(payload.toString())
    else if (channel === names.invalidationChannel) this.#bus.receive(payload.toString())
    else if (channel === names.tuningChannel) this.#tuning.receive(payload.toString())
  }

  readonly #readThrough: ReadThrough = (key, name, hot) =>
    this.#data.get(key).then((value) => {
      if (value === null) this.#onMiss(name, hot)
      return value
    })

  // A registered key's plain read answers what the application stored, unwrapped from getOrLoad's envelope.
  // Not for other keys: their reads go to Redis without a reaction on the reply (see get).
  readonly #readRegistered: ReadThrough = (key, name, hot) =>
    this.#data.get(key).then((text) => {
      const value = unwrapStored(text)
      if (value === null) this.#onMiss(name, hot)
      return value
    })

  readonly #fetch: FetchThrough = async (name, hot, loader, options) => {
    const observed = observedLoader(name, loader, this.#telemetry, this.#events, this.#counters)
    const fetched = await this.#guard.fetch(name, observed, options)
    if (fetched.source === 'load' || fetched.source === 'peer') this.#onMiss(name, hot)
    return fetched
  }

  // A fill abandoned (its tracking connection lost, or past l1.fillTimeoutMs) is counted once, however many
  // reads waited on it: each of them goes on to Redis.
  #counted<T>(fill: Promise<T>): Promise<T> {
    return fill.catch((error: unknown) => {
      if (error instanceof FillAbandonedError) this.#counters.l1FillsAbandoned++
      throw error
    })
  }

  readonly #onMiss = (name: string, hot: HotKey | undefined): void => {
    this.#recorder.recordMiss(name)
    if (hot !== undefined) hot.misses++
  }

  // Every invalidation the agent learns of reaches L1 and the loads in flight (and reads, through the shared
  // generations), so that neither caches what the invalidation made old.
  readonly #invalidate: Invalidate = {
    key: (name: string, source: InvalidationSource) => {
      this.#l1.invalidate(name, source)
      this.#replies.invalidate(name, source)
      this.router.detach(name)
      this.#guard.invalidate(name)
    },
    all: (source: InvalidationSource) => {
      if (source !== 'registry') this.#events.invalidated(null, source)
      this.#l1.invalidateAll(source)
      this.#replies.invalidateAll(source)
      this.router.detachAll()
      this.#guard.invalidateAll()
    },
  }
}

/** `promise`, or undefined once `ms` have passed. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
}
