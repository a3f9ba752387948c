// Longer than 300 lines: the getOrLoad protocol (serve, wait on the fill channel, take the lease, load, fill,
// refresh ahead of expiry, serve stale in grace) is one state machine over the guard's coalescing slots, counters
// and lease target; its building blocks are files of their own (lease.ts, envelope.ts, xfetch.ts, fill-channel.ts,
// single-flight.ts, load-runner.ts), and what stays here is the order they run in.
import type { HeatsinkNames } from '@heatsink/protocol'
import { type Clock, systemClock } from '@heatsink/sketch'
import type { Cluster, Redis } from 'ioredis'
import type { CoalesceSlot } from './coalesce-slot.js'
import { type Codec, jsonCodec } from './codec.js'
import { freshness, readEntry } from './entry.js'
import { GuardClosedError, LoadTimeoutError } from './errors.js'
import type { Fetched, GuardErrorContext } from './fetched.js'
import { FillAnnouncer, FillNotifier } from './fill-channel.js'
import { Generations } from './generations.js'
import { type KeyStats, StatsBook } from './key-stats.js'
import { type HeldLease, type LeaseTarget, type LeaseTiming, tryLease } from './lease.js'
import type { ContextLoader } from './load-context.js'
import { type Graced, type Load, type Loader, LoadRunner } from './load-runner.js'
import { type GetOrLoadOptions, positive, type ResolvedLoadOptions, resolveLoadOptions } from './options.js'
import { SingleFlight } from './single-flight.js'
import { delAndBreakLease, type SetArguments, setAndBreakLease } from './write-through.js'

/** Options of createStampedeGuard. */
export interface StampedeGuardOptions {
  /** Commands go here: a Redis or a Cluster. Lease keys live here, beside the keys they guard. */
  redis: Redis | Cluster
  /**
   * Heatsink's control Redis, when it is not `redis`: lease ends are announced on its fill channel, and `redis`
   * carries no channel of Heatsink's. Default: `redis`, whose lease scripts announce in the same step.
   */
  control?: Redis | Cluster
  /**
   * Listens on the fill channel; may be shared with other subscriptions. Default: (control ?? redis).duplicate(). `false`:
   * the owner subscribes to fillChannel(names) itself and hands each message to onFillMessage(), so that a
   * subscriber that resubscribes its own channels after a reconnect (the agent's) carries this one too.
   */
  subscriber?: Redis | Cluster | false
  names: HeatsinkNames
  /** Prefixes lease tokens, so a lease in Redis says which agent holds it. */
  agentId: string
  clock?: Clock
  /** Uniform in [0, 1): TTL jitter, XFetch draws, poll jitter. Default Math.random. */
  random?: () => number
  /** Default JSON. */
  codec?: Codec
  /** Lease time to live; extended every third of it while the load runs. Default 5,000 ms. */
  leaseMs?: number
  /** A load holds its lease at most this long, so a hung loader frees the key. Default 60,000 ms. */
  maxLeaseMs?: number
  /** Base of the jittered poll, base * (1 + random), while waiting on another agent's lease. Default 50 ms. */
  pollMs?: number
  /** maxWaitMs of calls that give none. Default 5,000 ms. */
  maxWaitMs?: number
  /** Failures no caller sees: background refreshes, fills, lease extensions and releases. */
  onError?: (error: unknown, context: GuardErrorContext) => void
}

type Fallback = GetOrLoadOptions<unknown>['fallback']

/** createStampedeGuard's result, for the agent's getOrLoad: see the class's methods. */
export class StampedeGuard {
  readonly #redis: Redis | Cluster
  readonly #subscriber: Redis | Cluster | undefined
  readonly #ownsSubscriber: boolean
  readonly #names: HeatsinkNames
  readonly #agentId: string
  readonly #clock: Clock
  readonly #random: () => number
  readonly #codec: Codec
  readonly #timing: LeaseTiming
  readonly #pollMs: number
  readonly #maxWaitMs: number
  readonly #onError: (error: unknown, context: GuardErrorContext) => void
  readonly #announcer: FillAnnouncer
  readonly #notifier: FillNotifier
  readonly #generations = new Generations()
  readonly #stats = new StatsBook()
  readonly #flights: SingleFlight<Fetched<unknown>>
  readonly #loads: LoadRunner
  readonly #background = new Set<Promise<void>>()
  /** The signal of background refreshes, which no caller waits on: fired when the guard closes. */
  readonly #closed = new AbortController()
  #closing: Promise<void> | undefined

  constructor(options: StampedeGuardOptions) {
    this.#redis = options.redis
    this.#ownsSubscriber = options.subscriber === undefined
    this.#subscriber =
      options.subscriber === false
        ? undefined
        : (options.subscriber ?? (options.control ?? options.redis).duplicate())
    this.#names = options.names
    this.#agentId = options.agentId
    this.#clock = options.clock ?? systemClock
    this.#random = options.random ?? Math.random
    this.#codec = options.codec ?? jsonCodec
    this.#timing = {
      leaseMs: positive('leaseMs', options.leaseMs ?? 5_000),
      maxLeaseMs: positive('maxLeaseMs', options.maxLeaseMs ?? 60_000),
    }
    this.#pollMs = positive('pollMs', options.pollMs ?? 50)
    this.#maxWaitMs = positive('maxWaitMs', options.maxWaitMs ?? 5_000)
    this.#onError = options.onError ?? (() => {})
    this.#announcer = new FillAnnouncer(options.names, options.control)
    this.#notifier = new FillNotifier(this.#subscriber, this.#announcer.channel, this.#clock)
    this.#flights = new SingleFlight(this.#generations, this.#clock, (slot) => this.#count(slot))
    this.#loads = new LoadRunner({
      redis: this.#redis,
      clock: this.#clock,
      random: this.#random,
      codec: this.#codec,
      generations: this.#generations,
      stats: this.#stats,
      closing: () => this.#closing !== undefined,
      report: (error, key, phase) => this.#report(error, key, phase),
    })
  }

  /** Resolves once the guard hears lease announcements; calls made before still work, polling. */
  ready(): Promise<void> {
    return this.#notifier.ready()
  }

  /** One message of the fill channel (the key whose lease ended), for a guard made with `subscriber: false`. */
  onFillMessage(key: string): void {
    this.#notifier.wake(key)
  }

  /** The per-key generations; share them with coalesceReads so that invalidate() covers plain reads too. */
  get generations(): Generations {
    return this.#generations
  }

  /**
   * The cached value of `key`, or the loader's, loaded once however many callers ask at once. The loader is
   * handed a LoadContext (its signal, the stale value, setTtl, skip); `options.signal` lets a caller leave early.
   */
  async getOrLoad<T>(key: string, loader: ContextLoader<T>, options: GetOrLoadOptions<T>): Promise<T> {
    return (await this.fetch(key, loader, options)).value
  }

  /** getOrLoad, telling also where the value came from and under which generation (for the agent's L1). */
  async fetch<T>(key: string, loader: ContextLoader<T>, options: GetOrLoadOptions<T>): Promise<Fetched<T>> {
    if (this.#closing !== undefined) throw new GuardClosedError()
    const resolved = resolveLoadOptions(options, this.#maxWaitMs)
    const fetched = await this.#flights.run(
      key,
      resolved.maxWaitMs,
      (waitedMs, slot) => this.#timedOut(slot, waitedMs, options.fallback),
      (slot) => this.#resolve(key, loader as Loader, resolved, slot, options.fallback as Fallback),
      options.signal,
    )
    return fetched as Fetched<T>
  }

  /**
   * Starts the background refresh a read that XFetch drew early would (one per key in this process, and through
   * the lease one in the cluster), for a caller that holds what Redis stores for `key` (`stored`, read through a
   * connection that a write would have invalidated): the guard does not read it again.
   */
  refreshAhead<T>(key: string, stored: string, loader: ContextLoader<T>, options: GetOrLoadOptions<T>): void {
    if (this.#closing !== undefined) return
    this.#refresh(key, stored, loader as Loader, resolveLoadOptions(options, this.#maxWaitMs))
  }

  /** True while no write or invalidation of `key` has happened since `generation` was taken. */
  isCurrent(key: string, generation: number): boolean {
    return this.#generations.isCurrent(key, generation)
  }

  /**
   * The key was written, deleted or invalidated: loads in flight now are cached nowhere, and later callers
   * start anew. A lease this guard holds for the key is released, so its fill is refused in Redis too.
   */
  invalidate(key: string): void {
    this.#generations.bump(key)
    this.#loads.release(key)
  }

  /**
   * invalidate() for every key at once: the owner may have missed invalidations (it lost its channel). Every
   * load in flight is cached nowhere and every lease this guard holds is released.
   */
  invalidateAll(): void {
    this.#generations.bumpAll()
    void this.#loads.releaseAll()
  }

  /** SET through the lease-breaking script (see setAndBreakLease), invalidating locally before and after. */
  async set(key: string, ...args: SetArguments): Promise<string | null> {
    this.invalidate(key)
    try {
      return await setAndBreakLease(this.#redis, this.#announcer, key, ...args)
    } finally {
      this.invalidate(key)
    }
  }

  /** DEL through the lease-breaking script (see delAndBreakLease), invalidating locally before and after. */
  async del(key: string): Promise<number> {
    this.invalidate(key)
    try {
      return await delAndBreakLease(this.#redis, this.#announcer, key)
    } finally {
      this.invalidate(key)
    }
  }

  /** `key`'s counters in the current window. */
  keyStats(key: string): KeyStats | undefined {
    return this.#stats.peek(key)
  }

  /** Every key's counters for the window now ending; the next window starts at zero. */
  takeWindowStats(): Map<string, KeyStats> {
    return this.#stats.take()
  }

  /** Every counter summed over all keys since the guard was made (keys past the per-window cap included). */
  totals(): KeyStats {
    return this.#stats.totals()
  }

  /** Resolves when no background refresh is running (for tests and orderly shutdown). */
  async idle(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background])
  }

  /**
   * Rejects waiting callers with GuardClosedError, releases held leases, stops listening. Loaders still
   * running are not awaited; their results are cached nowhere.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const closed = new GuardClosedError()
      this.#flights.rejectAll(closed)
      this.#closed.abort(closed)
      await Promise.all([this.#notifier.close(), this.#loads.releaseAll()])
      const subscriber = this.#subscriber
      if (this.#ownsSubscriber && subscriber !== undefined) {
        await subscriber.quit().catch(() => subscriber.disconnect())
      }
    })()
    return this.#closing
  }

  // One flight: read Redis, serve what is usable, else load (or wait for another agent's load).
  async #resolve(
    key: string,
    loader: Loader,
    options: ResolvedLoadOptions,
    slot: CoalesceSlot<Fetched<unknown>>,
    fallback: Fallback,
  ): Promise<Fetched<unknown>> {
    const stored = await this.#redis.get(key)
    const served = this.#serve(key, stored, loader, options, slot.ticket, 'hit')
    return served ?? this.#loadBlocking(key, loader, options, slot, stored, fallback)
  }

  // What a usable entry gives its callers, starting a background refresh when XFetch or staleness calls for one.
  #serve(
    key: string,
    stored: string | null,
    loader: Loader,
    options: ResolvedLoadOptions,
    ticket: number,
    source: 'hit' | 'peer',
  ): Fetched<unknown> | undefined {
    const entry = readEntry(stored, this.#codec)
    if (entry === undefined) return undefined
    const state = freshness(entry, this.#clock.now(), options, this.#random)
    if (state === 'expired') return undefined
    if (state !== 'fresh') this.#refresh(key, stored as string, loader, options)
    return { value: entry.value, source: state === 'stale' ? 'stale' : source, generation: ticket }
  }

  // A load for waiting callers: `stored` is what Redis held (an expired value is the loader's graced entry, else
  // the caller's fallback is).
  async #loadBlocking(
    key: string,
    loader: Loader,
    options: ResolvedLoadOptions,
    slot: CoalesceSlot<Fetched<unknown>>,
    stored: string | null,
    fallback: Fallback,
  ): Promise<Fetched<unknown>> {
    const running = this.#loads.current(key)
    if (running !== undefined) {
      const shared = await running.promise
      if (shared !== undefined) return shared
    }
    const load = (lease: HeldLease | undefined, seen: string | null) =>
      this.#loads.run(key, loader, options, slot.ticket, lease, slot.signal, this.#graced(seen, fallback))
    if (!options.lock) return load(undefined, stored)

    const target = this.#target(key)
    const began = this.#clock.now()
    let peek = false
    let waited = false
    for (;;) {
      if (this.#closing !== undefined) throw new GuardClosedError()
      // Listen before trying, so an announcement between the attempt and the wait is not lost.
      const wait = this.#notifier.wait(key)
      const attempt = await tryLease(
        this.#redis,
        target,
        this.#agentId,
        this.#timing,
        this.#clock,
        peek,
        (error) => this.#report(error, key, 'extend'),
      ).catch((error: unknown) => {
        wait.cancel()
        throw error
      })
      if (attempt.kind !== 'held') wait.cancel()
      const source = waited ? 'peer' : 'hit'
      if (attempt.kind === 'stored') {
        const served = this.#serve(key, attempt.stored, loader, options, slot.ticket, source)
        if (served !== undefined) return served
        peek = false
        continue
      }
      if (attempt.kind === 'acquired') {
        const entry = readEntry(attempt.stored, this.#codec)
        if (entry !== undefined && freshness(entry, this.#clock.now(), options, () => 1) === 'fresh') {
          await attempt.lease.release()
          return { value: entry.value, source, generation: slot.ticket }
        }
        return load(attempt.lease, attempt.stored)
      }
      if (!waited) {
        waited = true
        this.#stats.for(key).leaseWaits++
      }
      if (slot.pending === 0) {
        // Every caller of this flight has given up: stop polling rather than wait for nobody.
        wait.cancel()
        throw new LoadTimeoutError(key, this.#clock.now() - began)
      }
      // Jittered, so waiting agents do not poll in lockstep; never past the lease's end, when a dead holder's
      // lease frees the key. A lease without a time to live (not ours) is simply polled.
      const poll = this.#pollMs * (1 + this.#random())
      wait.arm(attempt.remainingMs > 0 ? Math.min(attempt.remainingMs, poll) : poll)
      await wait.done
      peek = true
    }
  }

  // A stale or XFetch-drawn entry: one refresh per key in this process, and through the lease one in the cluster.
  #refresh(key: string, seen: string, loader: Loader, options: ResolvedLoadOptions): void {
    if (this.#closing !== undefined || this.#loads.current(key) !== undefined) return
    const ticket = this.#generations.ticket()
    const promise = (async (): Promise<Fetched<unknown> | undefined> => {
      const graced = this.#graced(seen, undefined)
      if (!options.lock)
        return this.#loads.run(key, loader, options, ticket, undefined, this.#closed.signal, graced, true)
      const attempt = await tryLease(
        this.#redis,
        this.#target(key),
        this.#agentId,
        this.#timing,
        this.#clock,
        false,
        (error) => this.#report(error, key, 'extend'),
      )
      if (attempt.kind !== 'acquired') return undefined
      // Another agent refreshed, or someone wrote, between our read and the lease: nothing to do.
      if (attempt.stored !== seen) {
        await attempt.lease.release()
        return undefined
      }
      return this.#loads.run(key, loader, options, ticket, attempt.lease, this.#closed.signal, graced, true)
    })()
    const load: Load = { ticket, signal: this.#closed.signal, promise }
    this.#loads.track(key, load)
    const background = promise.then(
      () => {},
      (error: unknown) => this.#report(error, key, 'refresh'),
    )
    this.#background.add(background)
    void background.finally(() => this.#background.delete(background))
  }

  // The value a loader may build on: Redis's expired (or stale) value, else the caller's fallback (the agent's
  // expired L1 entry). A cached "not found" is no value.
  #graced(stored: string | null, fallback: Fallback): Graced {
    const entry = readEntry(stored, this.#codec)
    if (entry !== undefined && (entry.envelope === undefined || entry.envelope.kind === 'v')) {
      return { value: entry.value }
    }
    return fallback?.()
  }

  #timedOut(
    slot: CoalesceSlot<Fetched<unknown>>,
    waitedMs: number,
    fallback: GetOrLoadOptions<unknown>['fallback'],
  ) {
    const stats = this.#stats.for(slot.key)
    stats.timeouts++
    const stale = fallback?.()
    if (stale === undefined) throw new LoadTimeoutError(slot.key, waitedMs)
    stats.staleServes++
    return { value: stale.value, source: 'fallback' as const, generation: slot.ticket }
  }

  // Settled flights feed the window's counters; the first caller of a loading flight is the load itself.
  #count(slot: CoalesceSlot<Fetched<unknown>>): void {
    const source = slot.result?.value.source
    if (source === undefined) return
    const stats = this.#stats.for(slot.key)
    if (source === 'load') stats.coalescedWaiters += slot.joined - 1
    else if (source === 'peer') stats.coalescedWaiters += slot.joined
    else if (source === 'stale') stats.staleServes += slot.joined
  }

  #target(key: string): LeaseTarget {
    const announcer = this.#announcer
    return {
      key,
      leaseKey: this.#names.leaseKey(key),
      channel: announcer.scriptChannel,
      announce: (ended) => announcer.ended([ended]),
    }
  }

  #report(error: unknown, key: string, phase: GuardErrorContext['phase']): void {
    try {
      this.#onError(error, { key, phase })
    } catch {
      // A failing error hook must not turn a background failure into an unhandled rejection.
    }
  }
}

/** A stampede guard over one Redis (or Cluster) and namespace; call ready() before relying on announcements. */
export function createStampedeGuard(options: StampedeGuardOptions): StampedeGuard {
  return new StampedeGuard(options)
}
