import { type CommandSpec, keyIndexes, lookupCommand, writtenKeyIndexes } from '@heatsink/commands'
import type { WindowRecorder } from '@heatsink/sketch'
import type { Splitter } from '@heatsink/split'
import { missSampleWeight } from '../miss-sampling.js'
import type { HotKey } from '../registry-view.js'
import type { AgentCounters } from '../stats.js'
import { lossless } from './lossless-key.js'
import { recordCommand } from './record-command.js'
import type { CachedReply, ReplyCache, ReplyFill } from './reply-cache.js'
import { ReplyFlights } from './reply-flights.js'
import { type ConnectionState, FALL_THROUGH, type Route } from './route.js'
import { keyText, signatureOf } from './signature.js'
import { SPLIT_ROUTES } from './split-routes.js'
import { WriteFences } from './write-fences.js'

/** What the router reads and acts on: the agent's parts, none of them a client connection. */
export interface CommandRouterParts {
  lookup(name: string): HotKey | undefined
  recorder: WindowRecorder
  counters: AgentCounters
  cache: ReplyCache
  /** The command on a connection whose reads Redis tracks, with the key's PTTL. */
  fill(name: string, command: string, args: readonly unknown[]): Promise<ReplyFill>
  /** This process wrote `name` (or is about to): L1, loads and reads in flight forget it. */
  invalidate(name: string): void
  /** This process changed the whole keyspace (FLUSHALL, FLUSHDB, SWAPDB): everything is forgotten. */
  invalidateAll(): void
  /** Tells every other agent that these registered keys were written. */
  publish(names: string[]): void
  splitter: Splitter
  /** A split key's factor, resharding first when the registry changed it. */
  splitFactor(hot: HotKey): number
}

/**
 * The data-plane core: one decision per command, from the command table. Every key a command touches is
 * recorded (read or write); reads of local_cache keys are answered from L1, identical reads of coalesce keys
 * share one round trip, split keys go over their shards, and everything else goes to Redis unchanged. Writes
 * to a registered key evict this process's L1 before they are sent and again when answered, and while one is
 * in flight no read of the key is filled from the tracking connection (it would overtake the write): reads
 * queue behind it on the client's own connection, so a process always reads its own writes.
 */
export class CommandRouter {
  readonly #parts: CommandRouterParts
  readonly #flights = new ReplyFlights()
  readonly #fences: WriteFences

  constructor(parts: CommandRouterParts) {
    this.#parts = parts
    this.#fences = new WriteFences(parts.invalidate, parts.publish)
  }

  /** The route for one command; `inTransaction` when the transport knows it is queued inside MULTI. */
  route(
    command: string,
    args: readonly unknown[],
    state: ConnectionState,
    inTransaction: boolean,
  ): Route | undefined {
    const spec = lookupCommand(command)
    const counters = this.#parts.counters
    counters.requests++
    if (spec === undefined) {
      counters.unknownCommands++
      return undefined
    }
    if (spec.transaction) return this.#transaction(spec, state)
    if (spec.access === 'none') return undefined
    const queued = inTransaction || state.inMulti
    if (spec.access === 'write') return this.#write(spec, args, state, queued)
    if (spec.singleKey >= 0) return this.#read(spec, args, queued, spec.singleKey)
    // EXISTS k: a cacheable command that takes many keys, called with one, is cached like any one-key read.
    if (spec.cacheable && args.length === 1) return this.#read(spec, args, queued, 0)
    return this.#readMany(spec, args, queued)
  }

  /**
   * The L1 reply for a read of one local_cache key named by a string, counted as route() counts a hit; else
   * undefined, having counted nothing (the command then takes route()). For clients that can answer a call
   * before building a command at all.
   */
  peek(spec: CommandSpec, name: string, args: readonly unknown[]): CachedReply | undefined {
    const hot = this.#parts.lookup(name)
    if (hot?.mitigation !== 'local_cache') return undefined
    const cached = this.#parts.cache.get(name, signatureOf(spec.name, args, spec.singleKey))
    if (cached === undefined) return undefined
    const counters = this.#parts.counters
    counters.requests++
    counters.reads++
    this.#record(spec, args, name, false)
    this.#hit(name, hot, cached)
    return cached
  }

  /**
   * The client's connection closed: a MULTI it had open is gone with it, and the writes it queued will never
   * run, so their fences lift (and L1 forgets the keys, in case EXEC ran just before the close).
   */
  connectionClosed(state: ConnectionState): void {
    state.inMulti = false
    const names = state.queuedWrites
    if (names.length === 0) return
    state.queuedWrites = []
    this.#fences.lift(names)
  }

  /** Reads of `name` in flight are shared no more (an invalidation from anywhere). */
  detach(name: string): void {
    this.#flights.detach(name)
  }

  detachAll(): void {
    this.#flights.detachAll()
  }

  #read(spec: CommandSpec, args: readonly unknown[], queued: boolean, keyIndex: number): Route | undefined {
    const { lookup, counters } = this.#parts
    const key = args[keyIndex]
    const name = keyText(key)
    // The registry lookup first: it leaves V8's hash of the string cached for the recorder's candidate lookup.
    const hot = lookup(name)
    const reads = this.#record(spec, args, name, false)
    counters.reads++
    if (hot === undefined) {
      // Misses count only for keys the recorder tracks, from the replies missSampleWeight picks: watching a
      // reply is the largest part of what the core adds to a read it does not mitigate.
      const weight = missSampleWeight(reads)
      return weight === 0 ? undefined : this.#watchMiss(name, weight)
    }
    if (queued || !lossless(key, name)) return undefined
    switch (hot.mitigation) {
      case 'local_cache':
        return spec.cacheable ? this.#fromCache(spec, args, name, hot, keyIndex) : undefined
      case 'coalesce':
        return this.#coalesced(spec, args, name, hot, keyIndex)
      case 'split':
        return this.#split(spec, args, name, hot)
    }
  }

  #fromCache(
    spec: CommandSpec,
    args: readonly unknown[],
    name: string,
    hot: HotKey,
    keyIndex: number,
  ): Route | undefined {
    const { cache, counters } = this.#parts
    const signature = signatureOf(spec.name, args, keyIndex)
    const cached = cache.get(name, signature)
    if (cached !== undefined) {
      this.#hit(name, hot, cached)
      return { kind: 'served', reply: cached.raw, key: name }
    }
    hot.l1Misses++
    counters.l1Misses++
    // A write of this process to the key is still in flight: a fill on another connection could overtake it.
    if (this.#fences.has(name)) return undefined
    const loading = cache.load(name, signature, () => this.#parts.fill(name, spec.name, args))
    if (loading === undefined) return undefined
    return {
      kind: 'deferred',
      reply: loading.then(
        (reply) => {
          if (reply === null) this.#onMiss(name, hot)
          return reply
        },
        () => Promise.reject(FALL_THROUGH),
      ),
    }
  }

  #coalesced(
    spec: CommandSpec,
    args: readonly unknown[],
    name: string,
    hot: HotKey,
    keyIndex: number,
  ): Route | undefined {
    if (!spec.cacheable || this.#fences.has(name)) return undefined
    const counters = this.#parts.counters
    const signature = signatureOf(spec.name, args, keyIndex)
    const shared = this.#flights.join(name, signature)
    if (shared !== undefined) {
      hot.readsJoined++
      counters.coalescedReadsJoined++
      return { kind: 'deferred', reply: shared }
    }
    hot.readsSent++
    counters.coalescedReadsSent++
    const settle = this.#flights.start(name, signature)
    return {
      kind: 'send',
      settle: (error, reply) => {
        settle(error, reply)
        if (reply === null) this.#onMiss(name, hot)
        return error ?? reply
      },
    }
  }

  #split(spec: CommandSpec, args: readonly unknown[], name: string, hot: HotKey): Route | undefined {
    const route = SPLIT_ROUTES.get(spec.name)
    const rest = args.slice(1)
    if (route === undefined || (route.splittable !== undefined && !route.splittable(rest))) return undefined
    const reply = route.run(this.#parts.splitter, name, this.#parts.splitFactor(hot), rest)
    return { kind: 'deferred', reply }
  }

  // MGET and the other reads of several keys: every key recorded; MGET's local_cache keys come from L1, the
  // rest stay in one MGET on the client's connection (so it keeps its place among the client's commands).
  #readMany(spec: CommandSpec, args: readonly unknown[], queued: boolean): Route | undefined {
    const { lookup, counters } = this.#parts
    const indexes = keyIndexes(spec, args)
    let local: number[] | undefined
    for (const index of indexes) {
      const name = keyText(args[index])
      const hot = lookup(name)
      this.#record(spec, args, name, false)
      counters.reads++
      if (hot?.mitigation !== 'local_cache') continue
      local ??= []
      local.push(index)
    }
    if (local === undefined || queued || spec.name !== 'mget') return undefined
    return this.#multiGet(args, local)
  }

  #multiGet(args: readonly unknown[], local: number[]): Route | undefined {
    const { cache, counters, lookup } = this.#parts
    const replies = new Array<unknown>(args.length)
    let hits = 0
    for (const index of local) {
      const key = args[index]
      const name = keyText(key)
      const hot = lookup(name) as HotKey
      const cached = lossless(key, name) ? cache.get(name, 'get')?.raw : undefined
      if (cached === undefined) {
        hot.l1Misses++
        counters.l1Misses++
        // Filled beside the MGET, so that the next read of the key is a hit.
        if (!this.#fences.has(name))
          cache.load(name, 'get', () => this.#parts.fill(name, 'get', [key]))?.catch(() => {})
        continue
      }
      hot.l1Hits++
      counters.l1Hits++
      replies[index] = cached
      hits++
    }
    if (hits === 0) return undefined
    if (hits === args.length) return { kind: 'served', reply: replies }
    const rest: unknown[] = []
    for (let i = 0; i < args.length; i++) if (!(i in replies)) rest.push(args[i])
    return {
      kind: 'send',
      args: rest,
      settle: (error, reply) => {
        if (error !== null) return error
        const fetched = reply as unknown[]
        let next = 0
        for (let i = 0; i < replies.length; i++) if (!(i in replies)) replies[i] = fetched[next++]
        return replies
      },
    }
  }

  #write(
    spec: CommandSpec,
    args: readonly unknown[],
    state: ConnectionState,
    queued: boolean,
  ): Route | undefined {
    const { lookup, counters, invalidate } = this.#parts
    const indexes = spec.singleKey >= 0 ? undefined : keyIndexes(spec, args)
    // FLUSHALL, FLUSHDB and SWAPDB write the whole keyspace and name no key.
    if (indexes?.length === 0) return this.#flush()
    const written = indexes === undefined ? undefined : new Set(writtenKeyIndexes(spec, args))
    let registered: string[] | undefined
    let first: HotKey | undefined
    for (let i = 0, n = indexes?.length ?? 1; i < n; i++) {
      const index = indexes === undefined ? spec.singleKey : (indexes[i] as number)
      const name = keyText(args[index])
      const hot = lookup(name)
      const write = written === undefined || written.has(index)
      this.#record(spec, args, name, write)
      if (!write) {
        counters.reads++
        continue
      }
      counters.writes++
      invalidate(name)
      if (hot === undefined) continue
      first ??= hot
      registered ??= []
      registered.push(name)
      this.#fences.raise(name)
    }
    if (registered === undefined) return undefined
    if (queued) {
      // Inside MULTI the write happens at EXEC: the fence holds until then.
      state.queuedWrites.push(...registered)
      return undefined
    }
    const names = registered
    const split =
      first?.mitigation === 'split' && indexes === undefined
        ? this.#split(spec, args, first.key, first)
        : undefined
    if (split?.kind === 'deferred')
      return { kind: 'deferred', reply: this.#fences.liftAfter(names, split.reply) }
    return this.#fences.sendThenLift(names)
  }

  #transaction(spec: CommandSpec, state: ConnectionState): Route | undefined {
    if (spec.name === 'multi') {
      state.inMulti = true
      return undefined
    }
    if (spec.name !== 'exec' && spec.name !== 'discard') return undefined
    state.inMulti = false
    const names = state.queuedWrites
    if (names.length === 0) return undefined
    state.queuedWrites = []
    return this.#fences.sendThenLift(names)
  }

  #flush(): Route {
    const invalidateAll = this.#parts.invalidateAll
    invalidateAll()
    return {
      kind: 'send',
      settle: (error, reply) => {
        invalidateAll()
        return error ?? reply
      },
    }
  }

  #record(spec: CommandSpec, args: readonly unknown[], name: string, write: boolean): number {
    return recordCommand(this.#parts.recorder, spec, args, name, write)
  }

  #watchMiss(name: string, weight: number): Route {
    const recorder = this.#parts.recorder
    return {
      kind: 'send',
      settle: (error, reply) => {
        if (reply === null) recorder.recordMiss(name, weight)
        return error ?? reply
      },
    }
  }

  #hit(name: string, hot: HotKey, cached: CachedReply): void {
    hot.l1Hits++
    this.#parts.counters.l1Hits++
    if (cached.raw === null) this.#onMiss(name, hot)
  }

  #onMiss(name: string, hot: HotKey): void {
    this.#parts.recorder.recordMiss(name)
    hot.misses++
  }
}
