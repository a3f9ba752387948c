// Over 300 lines: the Agent is where the parts (L1, registry view, router, channels, reporter, stampede guard,
// split, replicas) are built and wired to one another, and its constructor's callbacks close over each other;
// every concept it wires lives in its own folder, and what remains here is that wiring and the lifecycle
// (ready, close, channel loss) that spans all of them.
import { CommandForm } from '@heatsink/commands'
import type { Mitigation } from '@heatsink/protocol'
import { TumblingWindows, WindowRecorder } from '@heatsink/sketch'
import { createSplitter, type Reconciler, type Splitter } from '@heatsink/split'
import { createStampedeGuard, fillChannel, GuardClosedError, type StampedeGuard } from '@heatsink/stampede'
import type { Cluster, Redis } from 'ioredis'
import { agentCommands } from './agent-commands.js'
import { type Invalidate, InvalidationBus } from './channels/invalidation-bus.js'
import type { MessageHandler } from './channels/subscriber.js'
import { type InvalidationChannels, TRACKING_CHANNEL } from './channels/tracking.js'
import type { OwnedConnections } from './connections/connections.js'
import { CommandRouter } from './data-plane/command-router.js'
import { AgentClosedError, AgentNotReadyError, FillAbandonedError } from './errors.js'
import { AgentEvents } from './events/agent-events.js'
import { AgentCounters, type AgentStats, type InvalidationSource, statsSnapshot } from './events/stats.js'
import { checkLoadOptions } from './get-or-load/check-load-options.js'
import { L1Loads } from './get-or-load/l1-loads.js'
import type { Loader, LoadOptions } from './get-or-load/loader.js'
import { observedLoader } from './get-or-load/observed-loader.js'
import {
  type FetchThrough,
  GuardedLoads,
  LocalCacheStrategy,
  type StrategyTable,
} from './get-or-load/strategies.js'
import { ReplyCache, type ReplyFill } from './l1/reply-cache.js'
import type { ResolvedOptions } from './options/agent-options.js'
import type { HotKey } from './registry/hot-key.js'
import { RegistryView } from './registry/registry-view.js'
import { ReplicaReads } from './replicas/replica-reads.js'
import { DEFAULT_ERROR_SAMPLING, Reporter } from './reporting/reporter.js'
import { ReportingTuning } from './reporting/reporting-tuning.js'
import { WatchAbortTally } from './reporting/watch-aborts.js'
import { SplitStrategy } from './split/split-strategy.js'
import { AgentTelemetry } from './telemetry/agent-telemetry.js'

/** What createAgent hands the agent: the data client, resolved options and the connections it opened. */
export interface AgentParts<C extends Redis | Cluster> {
  data: C
  /** The control Redis's command connection; undefined when the data Redis is also the control Redis. */
  control: Redis | Cluster | undefined
  options: ResolvedOptions
  connections: OwnedConnections
  reportConnection: Redis | Cluster
  openChannels(onMessage: MessageHandler): InvalidationChannels
  /** Rejects when the control Redis cannot serve as one (checkStandaloneControl); ready() fails with it. */
  controlCheck?: Promise<void>
}

/**
 * The Heatsink agent of one process: detection, reporting, the registry view, L1, coalescing, split keys and
 * invalidation, with the data-plane core (`router`) that every front door hands its commands: the ioredis drop-in,
 * the proxy, and the object createAgent returns, whose get, set, del, mget and counter, set and sorted-set
 * methods go through it too (agentCommands). getOrLoad is the agent's own; every other command stays on
 * `agent.redis`.
 */
export class Agent<C extends Redis | Cluster = Redis | Cluster> {
  /** The client the agent wraps, for every command it does not. */
  readonly redis: C
  readonly agentId: string
  readonly #data: Redis
  /** Where Heatsink's own state is read and announced: the control Redis, or the data Redis without one. */
  readonly #control: Redis | Cluster
  readonly #options: ResolvedOptions
  readonly #counters = new AgentCounters()
  // The flights whose miss is counted. A flight's callers share its Fetched, and one miss is one read that found
  // nothing and went to the loader (here or in a peer): the callers coalesced onto it are not misses of their own,
  // or a hot key expiring under many readers would look like a miss storm (see MissStormWatch).
  readonly #missedFlights = new WeakSet<object>()
  readonly #watchAborts = new WatchAbortTally()
  readonly #recorder: WindowRecorder
  readonly #windows: TumblingWindows
  readonly #view: RegistryView
  /** The one L1: replies of every front door's reads, getOrLoad's values among them (see L1Loads). */
  readonly #replies: ReplyCache
  readonly #loads: L1Loads
  /**
   * The data-plane core every front door hands its commands to: the drop-in, the proxy, this object's own methods.
   * @internal
   */
  readonly router: CommandRouter
  readonly #strategies: StrategyTable
  readonly #channels: InvalidationChannels
  readonly #bus: InvalidationBus
  readonly #reporter: Reporter
  readonly #tuning: ReportingTuning
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
  readonly #controlCheck: Promise<void>
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
    this.#controlCheck = parts.controlCheck ?? Promise.resolve()
    // Observed by ready(); a process that never calls it must not die of an unhandled rejection.
    this.#controlCheck.catch((error: unknown) =>
      log.error({ error: (error as Error).message }, 'control Redis refused'),
    )
    this.#events = new AgentEvents(options.agentId)
    this.#replies = new ReplyCache(options.l1, clock, this.#counters, this.#events)
    // Entries of a key still read are refilled ahead of their expiry.
    this.#replies.hitsOf = (name) => this.#view.get(name)?.l1Hits
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
    this.#loads = new L1Loads(
      this.#replies,
      (name) => this.#fillReply(name, 'get', [name]),
      clock,
      options.l1,
    )
    this.#split = new SplitStrategy(this.#splitter, this.#fetch, log, () => clock.now())
    this.#strategies = {
      local_cache: new LocalCacheStrategy({
        l1: this.#loads,
        fetch: this.#fetch,
        refresh: (name, stored, loader, options) =>
          guard.refreshAhead(
            name,
            stored,
            observedLoader(name, loader, this.#telemetry, this.#events, this.#counters),
            options,
          ),
        isCurrent: (name, generation) => guard.isCurrent(name, generation),
        codec: options.codec,
        counters: this.#counters,
        log,
      }),
      split: this.#split,
      coalesce: new GuardedLoads(this.#fetch),
      replica_read: new GuardedLoads(
        this.#fetch,
        () => this.#replicaReads.enter(),
        (hot) => this.#replicaReads.leave(hot.key),
      ),
    }
    this.#view = new RegistryView({
      readSnapshot: () => this.#control.hget(names.registrySnapshotKey, 'snapshot'),
      readVersion: () => this.#control.hget(names.registrySnapshotKey, 'version'),
      strategyFor: (mitigation) => this.#strategies[mitigation],
      onChange: (hot, before, after) => {
        if (before !== undefined) this.#strategies[before].leave(hot)
        if (after === 'local_cache') {
          this.#replies.admit(hot.key)
          this.#localCacheKeys++
        } else if (before === 'local_cache') {
          this.#replies.retire(hot.key)
          this.#localCacheKeys--
        }
        // Admitted before local_cache's enter, which fills the key at once.
        if (after !== undefined) this.#strategies[after].enter(hot)
        if (after !== undefined) {
          this.#counters.promotions++
          this.#events.promoted(hot.key, after, before)
        } else if (before !== undefined) {
          this.#counters.demotions++
          this.#events.demoted(hot.key, before)
        }
        log.info({ key: hot.key, before, after }, 'registry change')
      },
      canCheck: () => this.#channels.state.up,
      registryKey: options.registryKey,
      counters: this.#counters,
      log,
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
      timeoutMs: options.reportTimeoutMs,
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
      watchAborts: () => this.#watchAborts.take(),
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
    this.router = new CommandRouter({
      lookup: (name) => this.#view.get(name),
      recorder: this.#recorder,
      counters: this.#counters,
      cache: this.#replies,
      fill: (name, command, args) => this.#fillReply(name, command, args),
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
      watchAborted: (keys) => this.#watchAborts.record(keys),
    })
    const commands = agentCommands(parts.data, this.router)
    this.get = commands.get as Redis['get']
    this.set = commands.set as Redis['set']
    this.del = commands.del as Redis['del']
    this.mget = commands.mget as Redis['mget']
    this.incr = commands.incr as Redis['incr']
    this.incrby = commands.incrby as Redis['incrby']
    this.decr = commands.decr as Redis['decr']
    this.decrby = commands.decrby as Redis['decrby']
    this.sadd = commands.sadd as Redis['sadd']
    this.srem = commands.srem as Redis['srem']
    this.smembers = commands.smembers as Redis['smembers']
    this.scard = commands.scard as Redis['scard']
    this.sismember = commands.sismember as Redis['sismember']
    this.zadd = commands.zadd as Redis['zadd']
    this.zrem = commands.zrem as Redis['zrem']
    this.zscore = commands.zscore as Redis['zscore']
    this.zcard = commands.zcard as Redis['zcard']
    this.zrange = commands.zrange as unknown as Redis['zrange']
    this.zrevrange = commands.zrevrange as unknown as Redis['zrevrange']
    // One agent at a time (under a lease) evens out shards that drifted and finishes folds others left.
    this.#reconciler = this.#splitter.startReconciler({
      intervalMs: 5000,
      keys: () => this.#split.splitKeys(),
      onError: (error) => log.warn({ error: (error as Error).message }, 'split reconciliation failed'),
    })
    this.#telemetry = new AgentTelemetry(options.agentId, names.namespace, () => ({
      l1Hits: this.#counters.l1Hits,
      l1Misses: this.#counters.l1Misses,
      l1Entries: this.#replies.size,
      l1Bytes: this.#replies.bytes,
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

  /** ioredis GET, SET, DEL and MGET, through the router as the drop-in's (see agentCommands). */
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
      l1Entries: this.#replies.size,
      l1Bytes: this.#replies.bytes,
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
      await Promise.race([Promise.all([this.#whenReady, this.#guard.ready(), this.#controlCheck]), timedOut])
    } finally {
      clearTimeout(timer)
    }
  }

  // Channels down: L1 is emptied and stays empty. Back up: events may have been missed, so the registry is
  // reloaded, and local_cache keys are filled again.
  #onChannels(up: boolean): void {
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

  readonly #fetch: FetchThrough = async (name, hot, loader, options) => {
    const observed = observedLoader(name, loader, this.#telemetry, this.#events, this.#counters)
    const fetched = await this.#guard.fetch(name, observed, options)
    if ((fetched.source === 'load' || fetched.source === 'peer') && !this.#missedFlights.has(fetched)) {
      this.#missedFlights.add(fetched)
      this.#onMiss(name, hot)
    }
    return fetched
  }

  // Each fill is one read of the key at Redis, however many reads wait on it (the key's l1Fills: what L1 did not
  // absorb). A fill abandoned (its tracking connection lost, or past l1.fillTimeoutMs) is counted once, however
  // many reads waited on it: each of them goes on to Redis. A GET's fill goes by getOrLoad's lifetime rule for
  // envelopes (see L1Loads.fillPttl), whichever front door asked.
  #fillReply(name: string, command: string, args: readonly unknown[]): Promise<ReplyFill> {
    const hot = this.#view.get(name)
    if (hot !== undefined) hot.l1Fills++
    const fill = this.#channels.fillReply(name, command, args).catch((error: unknown) => {
      if (error instanceof FillAbandonedError) this.#counters.l1FillsAbandoned++
      throw error
    })
    if (command !== 'get') return fill
    return fill.then(([reply, pttl]) => [reply, this.#loads.fillPttl(reply, pttl)] as const)
  }

  readonly #onMiss = (name: string, hot: HotKey | undefined): void => {
    this.#recorder.recordMiss(name)
    if (hot !== undefined) hot.misses++
  }

  // Every invalidation the agent learns of reaches L1 and the loads in flight (and reads, through the shared
  // generations), so that neither caches what the invalidation made old.
  readonly #invalidate: Invalidate = {
    key: (name: string, source: InvalidationSource) => {
      this.#replies.invalidate(name, source)
      this.router.detach(name)
      this.#guard.invalidate(name)
    },
    all: (source: InvalidationSource) => {
      if (source !== 'registry') this.#events.invalidated(null, source)
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
