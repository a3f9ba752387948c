import type { Mitigation } from '@heatsink/protocol'
import { TumblingWindows, WindowRecorder } from '@heatsink/sketch'
import type { Callback, Cluster, Redis, RedisKey } from 'ioredis'
import { keyName, keysOf, nodeify, takeCallback } from './command-args.js'
import type { OwnedConnections } from './connections.js'
import { AgentClosedError, AgentNotReadyError } from './errors.js'
import { InvalidationBus } from './invalidation-bus.js'
import { L1Cache } from './l1-cache.js'
import { MultiGet } from './multi-get.js'
import type { ResolvedOptions } from './options.js'
import { type HotKey, RegistryView } from './registry-view.js'
import { Reporter } from './reporter.js'
import { AgentCounters, type AgentStats, statsSnapshot } from './stats.js'
import {
  LocalCacheStrategy,
  PassThroughStrategy,
  type ReadThrough,
  type StrategyTable,
} from './strategies.js'
import type { MessageHandler } from './subscriber.js'
import { type InvalidationChannels, TRACKING_CHANNEL } from './tracking.js'

/** What createAgent hands the agent: the data client, resolved options and the connections it opened. */
export interface AgentParts<C extends Redis | Cluster> {
  data: C
  options: ResolvedOptions
  connections: OwnedConnections
  reportConnection: Redis | Cluster
  openChannels(onMessage: MessageHandler): InvalidationChannels
}

type Variadic = (...args: unknown[]) => Promise<unknown>

/**
 * The Heatsink agent: ioredis's get, set, del and mget with the same arguments and results, plus detection,
 * reporting, the registry view and L1. Every other command stays on `agent.redis`.
 */
export class Agent<C extends Redis | Cluster = Redis | Cluster> {
  /** The client the agent wraps, for every command it does not. */
  readonly redis: C
  readonly agentId: string
  readonly #data: Redis
  readonly #options: ResolvedOptions
  readonly #counters = new AgentCounters()
  readonly #recorder: WindowRecorder
  readonly #windows: TumblingWindows
  readonly #view: RegistryView
  readonly #l1: L1Cache
  readonly #strategies: StrategyTable
  readonly #channels: InvalidationChannels
  readonly #bus: InvalidationBus
  readonly #reporter: Reporter
  readonly #multiGet: MultiGet
  readonly #connections: OwnedConnections
  readonly #whenReady: Promise<void>
  #markReady: () => void = () => {}
  #readyCall: Promise<void> | undefined
  #closing: Promise<void> | undefined

  constructor(parts: AgentParts<C>) {
    const options = parts.options
    const { names, clock, log } = options
    this.redis = parts.data
    this.agentId = options.agentId
    this.#data = parts.data as unknown as Redis
    this.#options = options
    this.#connections = parts.connections
    this.#whenReady = new Promise((resolve) => {
      this.#markReady = resolve
    })
    this.#l1 = new L1Cache(options.l1, clock, this.#counters)
    this.#channels = parts.openChannels(this.#onMessage)
    const passThrough = new PassThroughStrategy(this.#readThrough)
    const localCache = new LocalCacheStrategy({
      l1: this.#l1,
      fill: (name) => this.#channels.fill(name),
      readThrough: this.#readThrough,
      onMiss: this.#onMiss,
      counters: this.#counters,
      log,
    })
    this.#strategies = { local_cache: localCache, split: passThrough, coalesce: passThrough }
    this.#view = new RegistryView({
      readSnapshot: () => this.#data.hget(names.registrySnapshotKey, 'snapshot'),
      readVersion: () => this.#data.hget(names.registrySnapshotKey, 'version'),
      strategyFor: (mitigation) => this.#strategies[mitigation],
      onChange: (hot, before, after) => {
        if (before !== undefined) this.#strategies[before].leave(hot)
        if (after !== undefined) this.#strategies[after].enter(hot)
        log.info({ key: hot.key, before, after }, 'registry change')
      },
      canCheck: () => this.#channels.state.up,
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
      publish: (message) => this.#data.publish(names.invalidationChannel, message),
      agentId: options.agentId,
      clock,
      l1: this.#l1,
      counters: this.#counters,
      log,
    })
    this.#recorder = new WindowRecorder({
      ...options.sketch,
      reportFloor: options.fastReportFloor,
      onFloorCrossed: (key) => this.#reporter.onFloorCrossed(key),
    })
    this.#reporter = new Reporter({
      connection: parts.reportConnection,
      stream: names.reportStreamFor(options.agentId),
      agentId: options.agentId,
      recorder: this.#recorder,
      windowMs: options.windowMs,
      view: this.#view,
      counters: this.#counters,
      maxPartialsPerWindow: options.maxPartialReportsPerWindow,
      fastReportFloor: options.fastReportFloor,
      clock,
      log,
    })
    this.#windows = new TumblingWindows(this.#recorder, {
      windowMs: options.windowMs,
      clock,
      onWindow: this.#reporter.onWindow,
    })
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

  /** ioredis GET: from L1 for local_cache keys, from Redis otherwise. */
  readonly get: Redis['get'] = (key: RedisKey, callback?: Callback<string | null>) => {
    const name = typeof key === 'string' ? key : key.toString()
    const tracked = this.#recorder.record(name, false)
    const counters = this.#counters
    counters.requests++
    counters.reads++
    const hot = this.#view.get(name)
    // Misses count only for keys the recorder tracks, so an untracked key's reply is not watched: the extra
    // promise reaction per read measured as most of the pass-through overhead.
    const result =
      hot !== undefined
        ? hot.strategy.get(key, name, hot)
        : tracked
          ? this.#readThrough(key, name, undefined)
          : this.#data.get(key)
    return callback === undefined ? result : nodeify(result, callback)
  }

  /** ioredis SET, every form; evicts the key from L1 here at once and, once written, on every agent. */
  readonly set = ((key: RedisKey, ...rest: unknown[]) => {
    const callback = takeCallback(rest)
    const name = keyName(key)
    this.#counters.requests++
    this.#recordWrite(name)
    const pending = Reflect.apply(this.#data.set as Variadic, this.#data, [key, ...rest]) as Promise<unknown>
    return nodeify(this.#written([name], pending), callback)
  }) as Redis['set']

  /** ioredis DEL, variadic or with an array; evicts like set. */
  readonly del = ((...args: unknown[]) => {
    const callback = takeCallback(args)
    const names = keysOf(args).map(keyName)
    this.#counters.requests++
    for (const name of names) this.#recordWrite(name)
    const pending = Reflect.apply(this.#data.del as Variadic, this.#data, args) as Promise<unknown>
    return nodeify(this.#written(names, pending), callback)
  }) as Redis['del']

  /** ioredis MGET, variadic or with an array; local_cache keys come from L1 and the rest in one MGET. */
  readonly mget = ((...args: unknown[]) => {
    const callback = takeCallback(args)
    const keys = keysOf(args)
    const names = keys.map(keyName)
    this.#counters.requests++
    const local: number[] = []
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string
      this.#recorder.record(name, false)
      this.#counters.reads++
      if (this.#view.get(name)?.strategy.servesReads) local.push(i)
    }
    return nodeify(this.#multiGet.run(keys, names, local), callback)
  }) as Redis['mget']

  /** The key's mitigation as this agent sees the registry now. */
  mitigation(key: string): Mitigation | undefined {
    return this.#view.get(key)?.mitigation
  }

  /** The counters an operator wants; see AgentStats. */
  stats(): AgentStats {
    return statsSnapshot(this.#counters, {
      l1Entries: this.#l1.size,
      registryVersion: this.#view.version,
      invalidationChannelUp: this.#channels.state.up,
      hotKeys: this.#view.values(),
    })
  }

  /** Sends the last window's report (waiting up to closeTimeoutMs), unsubscribes and quits what the agent opened. */
  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    const timeout = this.#options.closeTimeoutMs
    const deadline = Date.now() + timeout
    this.#view.stopChecks()
    this.#reporter.stop()
    await this.#reporter.idle(timeout)
    this.#windows.stop({ flush: true })
    await this.#reporter.idle(Math.max(0, deadline - Date.now()))
    await this.#channels.close()
    this.#l1.clear()
    await this.#connections.closeAll()
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
      await Promise.race([this.#whenReady, timedOut])
    } finally {
      clearTimeout(timer)
    }
  }

  // Channels down: L1 is emptied and stays empty. Back up: events may have been missed, so the registry is
  // reloaded, and local_cache keys are filled again.
  #onChannels(up: boolean): void {
    this.#l1.setUsable(up)
    if (this.#closing !== undefined) return
    if (!up) {
      this.#options.log.warn({ agentId: this.agentId }, 'invalidation channel lost, L1 emptied')
      return
    }
    this.#options.log.info({ agentId: this.agentId }, 'invalidation channels live')
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
    else if (channel === names.registryChannel) this.#view.onMessage(payload.toString())
    else if (channel === names.invalidationChannel) this.#bus.receive(payload.toString())
  }

  readonly #readThrough: ReadThrough = (key, name, hot) =>
    this.#data.get(key).then((value) => {
      if (value === null) this.#onMiss(name, hot)
      return value
    })

  readonly #onMiss = (name: string, hot: HotKey | undefined): void => {
    this.#recorder.recordMiss(name)
    if (hot !== undefined) hot.misses++
  }

  #recordWrite(name: string): void {
    this.#recorder.record(name, true)
    this.#counters.writes++
    this.#l1.invalidate(name, 'local')
  }

  // After a write settles: evict again (a fill may have read the old value meanwhile) and tell the other agents.
  #written<T>(names: readonly string[], pending: Promise<T>): Promise<T> {
    const after = () => {
      const registered: string[] = []
      for (const name of names) {
        this.#l1.invalidate(name, 'local')
        if (this.#view.get(name) !== undefined) registered.push(name)
      }
      if (registered.length > 0) this.#bus.publish(registered)
    }
    return pending.then(
      (value) => {
        after()
        return value
      },
      (error: unknown) => {
        after()
        throw error
      },
    )
  }
}
