import type { Clock } from '@heatsink/sketch'
import type { Cluster, Redis } from 'ioredis'
import type { Codec } from './codec.js'
import { buildEntry } from './entry.js'
import type { Fetched, GuardErrorContext } from './fetched.js'
import type { Generations } from './generations.js'
import type { StatsBook } from './key-stats.js'
import type { HeldLease } from './lease.js'
import { type ContextLoader, LoadRun } from './load-context.js'
import type { ResolvedLoadOptions } from './options.js'

export type Loader = ContextLoader<unknown>
/** The value a loader may build on (the expired one), or undefined. */
export type Graced = { readonly value: unknown } | undefined

/** One load of a key in this process. */
export interface Load {
  ticket: number
  /** The load's signal: a load whose callers all aborted is shared with no later flight. */
  signal: AbortSignal
  /** Undefined when a background refresh found another agent at work and loaded nothing. */
  promise: Promise<Fetched<unknown> | undefined>
}

/** What a LoadRunner stores with and reports to: the guard's parts. */
export interface LoadRunnerParts {
  redis: Redis | Cluster
  clock: Clock
  random: () => number
  codec: Codec
  generations: Generations
  stats: StatsBook
  /** True once the guard is closing: nothing is stored from then on. */
  closing(): boolean
  report(error: unknown, key: string, phase: GuardErrorContext['phase']): void
}

/**
 * The loads this process runs, and the leases they hold. A load runs its loader and stores the result only while
 * the key's generation is the one it started under and it still owns its lease: a write or an invalidation
 * releases the lease (release()), so Redis refuses the fill too, and a store that lost its lease bumps the
 * generation so that L1 does not take a value that is not the key's.
 */
export class LoadRunner {
  readonly #parts: LoadRunnerParts
  readonly #loads = new Map<string, Load>()
  readonly #held = new Map<string, HeldLease>()

  constructor(parts: LoadRunnerParts) {
    this.#parts = parts
  }

  /** The key's load that a caller may share: not abandoned by its callers, and under the current generation. */
  current(key: string): Load | undefined {
    const load = this.#loads.get(key)
    return load !== undefined && !load.signal.aborted && this.#parts.generations.isCurrent(key, load.ticket)
      ? load
      : undefined
  }

  /** Makes `load` the key's load until it settles. */
  track(key: string, load: Load): void {
    this.#loads.set(key, load)
    const done = () => {
      if (this.#loads.get(key) === load) this.#loads.delete(key)
    }
    load.promise.then(done, done)
  }

  /**
   * Runs the loader (holding `lease`, when given) and stores its result while the generation is current, unless
   * the loader declined (skip) or everyone gave up on it before it started. A background load is not tracked
   * here: its caller tracks it, with the lease attempt that precedes it.
   */
  run(
    key: string,
    loader: Loader,
    options: ResolvedLoadOptions,
    ticket: number,
    lease: HeldLease | undefined,
    signal: AbortSignal,
    graced: Graced,
    background = false,
  ): Promise<Fetched<unknown>> {
    if (signal.aborted) {
      return this.endLease(key, lease).then(() => {
        throw signal.reason
      })
    }
    const { clock, stats } = this.#parts
    const counts = stats.for(key)
    counts.upstreamLoads++
    if (background) counts.backgroundRefreshes++
    if (lease !== undefined) this.#held.set(key, lease)
    const promise = (async () => {
      const started = clock.now()
      const run = new LoadRun(key, signal, graced, background)
      let value: unknown
      try {
        value = await loader(run)
      } catch (error) {
        await this.endLease(key, lease)
        throw error
      }
      if (run.skipped) await this.endLease(key, lease)
      else {
        const ttl =
          run.ttlMs === undefined ? options : { ...options, ttlMs: run.ttlMs, negativeTtlMs: run.ttlMs }
        await this.#store(key, value, clock.now() - started, ttl, ticket, lease)
      }
      return { value, source: 'load' as const, generation: ticket }
    })()
    if (!background) this.track(key, { ticket, signal, promise })
    return promise
  }

  /** Ends `lease` without storing anything. */
  async endLease(key: string, lease: HeldLease | undefined): Promise<void> {
    if (lease === undefined) return
    if (this.#held.get(key) === lease) this.#held.delete(key)
    await lease.release()
  }

  /** Releases the lease a load of `key` holds, if one does: the key was written or invalidated. */
  release(key: string): void {
    const lease = this.#held.get(key)
    if (lease === undefined) return
    this.#held.delete(key)
    void lease.release()
  }

  /** Releases every lease held (release never rejects: a failure goes to the error hook). */
  releaseAll(): Promise<unknown> {
    const leases = [...this.#held.values()]
    this.#held.clear()
    return Promise.all(leases.map((lease) => lease.release()))
  }

  async #store(
    key: string,
    value: unknown,
    deltaMs: number,
    options: ResolvedLoadOptions,
    ticket: number,
    lease: HeldLease | undefined,
  ): Promise<void> {
    const { redis, clock, random, codec, generations } = this.#parts
    const owned = lease !== undefined && this.#held.get(key) === lease
    if (this.#parts.closing() || !generations.isCurrent(key, ticket) || (lease !== undefined && !owned)) {
      await this.endLease(key, lease)
      return
    }
    try {
      const entry = buildEntry(value, deltaMs, clock.now(), options, random, codec)
      if (entry === undefined) {
        await this.endLease(key, lease)
        return
      }
      let stored = true
      if (lease === undefined) await redis.set(key, entry.text, 'PX', entry.ttlMs)
      else {
        this.#held.delete(key)
        stored = await lease.fill(entry.text, entry.ttlMs)
      }
      // A write broke the lease, or it ran out and passed on: our value is not the key's, so L1 must not take it.
      if (!stored) generations.bump(key)
    } catch (error) {
      this.#parts.report(error, key, 'fill')
      await this.endLease(key, lease)
    }
  }
}
