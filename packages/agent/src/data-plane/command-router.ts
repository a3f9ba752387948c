// Over 300 lines: the one decision every front door asks for each command (read, write, transaction, script,
// split key), whose paths share the per-command state (the key's HotKey, its flights, fences and L1 entry) and
// the hot path's budget (nothing allocated for a cold key). What stands apart already has its file: routes,
// write fences, script barriers, flights, signatures, split keys (../split/), the L1 (../l1/).
import { type CommandSpec, keyIndexes, lookupCommand, writtenKeyIndexes } from '@heatsink/commands'
import type { WindowRecorder } from '@heatsink/sketch'
import type { Splitter } from '@heatsink/split'
import type { AgentCounters } from '../events/stats.js'
import { lossless } from '../l1/lossless-key.js'
import type { CachedReply, ReplyCache, ReplyFill } from '../l1/reply-cache.js'
import type { HotKey } from '../registry/hot-key.js'
import { SplitKeys, type SplitWait } from '../split/split-keys.js'
import { missSampleWeight } from './miss-sampling.js'
import { recordCommand, recordRegistered } from './record-command.js'
import { ReplyFlights } from './reply-flights.js'
import { type AfterRoute, type ConnectionState, FALL_THROUGH, type Route } from './route.js'
import { ScriptBarriers, writesUndeclared } from './script-barriers.js'
import { keyText, signatureOf } from './signature.js'
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
  /** Resolves once every invalidation Redis queued for this process before the call has been applied. */
  barrier(): Promise<unknown>
  /** Whether L1 may hold anything (some key is local_cache). */
  l1InUse(): boolean
  /** Tells every other agent that these registered keys were written. */
  publish(names: string[]): void
  splitter: Splitter
  /** A split key's factor, resharding first when the registry changed it. */
  splitFactor(hot: HotKey): number
  /** Folds split key `hot` (laid out over `n`) into its base key, where it stays until the registry changes. */
  holdSplit(hot: HotKey, n: number): Promise<unknown>
  /**
   * A replica_read key's read on one of its primary's replicas (the parser's reply; a rejection: ask the primary),
   * or undefined when none may take it now.
   */
  replicaRead(name: string, command: string, args: readonly unknown[]): Promise<unknown> | undefined
  /** This process's write to registered key `name` was answered (replica_read reads it from the primary until the replicas have it). */
  written(name: string): void
  /** A transaction watching `keys` was aborted (its EXEC answered nil): write contention on them. */
  watchAborted(keys: readonly string[]): void
}

/** A decision: a route, a wait for a split key's classification or fold (then decide again), or send unchanged. */
type Decision = Route | SplitWait | undefined

/**
 * The data-plane core: one decision per command, from the command table. Every key a command touches is
 * recorded (read or write); reads of local_cache keys are answered from L1, identical reads of coalesce keys
 * share one round trip, reads of replica_read keys go to a replica within the lag bound, split keys go over their
 * shards, and everything else goes to Redis unchanged. Writes
 * to a registered key evict this process's L1 before they are sent and again when answered, and while one is
 * in flight no read of the key is filled from the tracking connection (it would overtake the write): reads
 * queue behind it on the client's own connection, so a process always reads its own writes. Redis sees a
 * connection's commands in their order: a split counter's commands on a standalone Redis are each one command on
 * the splitter's connection, sent at once, so they follow one another there (pipelined); a command that goes
 * anywhere else after them, and every command after a fold or a classification the core is still carrying out,
 * waits for it (an 'after' route).
 *
 * Plain commands are sent as they are, through every front door (the drop-in, the proxy, createAgent's methods):
 * a read of a key getOrLoad filled answers its envelope exactly as Redis holds it, and SET or DEL is sent as SET or
 * DEL, not as a script that also breaks getOrLoad's lease. Transparency is byte for byte: an application, a
 * migration tool or another client library reading the key must see the same bytes through Heatsink as without
 * it, and a write must stay the command Redis's ACLs, MULTI, Cluster slots, MONITOR and commandstats know. The
 * envelope is Heatsink's own format, decoded by getOrLoad (or unwrapStored). A load in flight does not overwrite a
 * plain write of its key because the write's invalidation reaches its guard, which releases the lease so the fill
 * is refused: in this process always, in other agents when the key is registered (the invalidation is published).
 */
export class CommandRouter {
  readonly #parts: CommandRouterParts
  readonly #flights = new ReplyFlights()
  readonly #fences: WriteFences
  readonly #scripts: ScriptBarriers
  readonly #splitKeys: SplitKeys
  // What settles once an 'after' route's command has been carried out.
  readonly #afterDone = new WeakMap<AfterRoute, Promise<void>>()
  // The key localCacheKey found last. A hot key is read over and over, often by the very same string: comparing with
  // it (for that string, one pointer compare) skips the registry Map's probe and its comparison of characters with
  // the registry's own string, parsed from JSON (together about a tenth of an L1 hit's instructions).
  #lastLocalName = ''
  #lastLocal: HotKey | undefined

  constructor(parts: CommandRouterParts) {
    this.#parts = parts
    this.#fences = new WriteFences(parts.invalidate, parts.publish, parts.written)
    this.#scripts = new ScriptBarriers(parts.barrier)
    this.#splitKeys = new SplitKeys({
      splitter: parts.splitter,
      splitFactor: parts.splitFactor,
      hold: parts.holdSplit,
    })
  }

  /**
   * The route for one command; `inTransaction` when the transport knows it is queued inside MULTI. `spec` is the
   * command's entry in the table, for a caller that looked it up already (one lookup per request, not two).
   */
  route(
    command: string,
    args: readonly unknown[],
    state: ConnectionState,
    inTransaction: boolean,
    spec: CommandSpec | undefined = lookupCommand(command),
  ): Route | undefined {
    const tail = state.tail
    if (tail !== undefined) {
      return this.#after(tail, state, true, () => this.#decide(spec, args, state, inTransaction))
    }
    const decision = this.#decide(spec, args, state, inTransaction)
    // Most commands: no split command of the connection in flight, and none to place among them.
    const unplaced =
      state.splitTail === undefined &&
      (decision === undefined ||
        ('kind' in decision && !(decision.kind === 'deferred' && decision.pipelined === true)))
    const placed = unplaced
      ? decision
      : this.#place(decision, state, true, () => this.#decide(spec, args, state, inTransaction))
    if (placed === decision) {
      const settled = this.#settledOf(placed)
      if (settled !== undefined) this.#holdConnection(state, settled)
    }
    return placed
  }

  /**
   * A decided command among the connection's commands: a pipelined split command follows the ones before it at
   * once; any other command waits until they are answered (on a connection of its own, or after a fold, it could
   * overtake them at Redis). `holdConnection` as in #after.
   */
  #place(
    decision: Decision,
    state: ConnectionState,
    holdConnection: boolean,
    decide: () => Decision,
  ): Route | undefined {
    const split = state.splitTail
    if (decision !== undefined && !('kind' in decision)) {
      const wait = split === undefined ? decision : { ready: split.then(() => decision.ready) }
      return this.#waitThen(wait, state, holdConnection, decide)
    }
    if (decision?.kind === 'deferred' && decision.pipelined === true) {
      this.#pipelined(state, decision.reply)
      return decision
    }
    if (split === undefined) return decision
    return this.#after(split, state, holdConnection, () => decision)
  }

  // The connection's split commands are answered in their order; the last one's settling stands for them all.
  #pipelined(state: ConnectionState, reply: Promise<unknown>): void {
    const before = state.splitTail
    const own = reply.then(noop, noop)
    const settled = before === undefined ? own : before.then(() => own)
    state.splitTail = settled
    settled.then(() => {
      if (state.splitTail === settled) state.splitTail = undefined
    })
  }

  #decide(
    spec: CommandSpec | undefined,
    args: readonly unknown[],
    state: ConnectionState,
    inTransaction: boolean,
  ): Decision {
    const counters = this.#parts.counters
    counters.requests++
    if (spec === undefined) {
      counters.unknownCommands++
      return undefined
    }
    if (spec.transaction) return this.#transaction(spec, args, state)
    if (spec.access === 'none') return undefined
    const queued = inTransaction || state.inMulti
    if (spec.access === 'write') return this.#write(spec, args, state, queued)
    if (spec.singleKey >= 0) return this.#read(spec, args, state, queued, spec.singleKey)
    // EXISTS k: a cacheable command that takes many keys, called with one, is cached like any one-key read.
    if (spec.cacheable && args.length === 1) return this.#read(spec, args, state, queued, 0)
    return this.#readMany(spec, args, queued || state.unsettledScripts > 0)
  }

  /** The registered key `name` when it is local_cache (a read of it may be an L1 hit), else undefined. */
  localCacheKey(name: string): HotKey | undefined {
    if (name === this.#lastLocalName) {
      const last = this.#lastLocal
      if (last?.registered === true && last.mitigation === 'local_cache') return last
    }
    const hot = this.#parts.lookup(name)
    if (hot?.mitigation !== 'local_cache') return undefined
    this.#lastLocalName = name
    this.#lastLocal = hot
    return hot
  }

  /**
   * The L1 reply for a read of `hot` (a local_cache key, see localCacheKey) named by `name`, counted as route()
   * counts a hit; else undefined, having counted nothing (the command then takes route()). For clients that can
   * answer a call before building a command at all. `args` undefined: the key is the call's only argument
   * (GET k, HGETALL k), whose signature is the command's name, so the hit builds nothing.
   */
  peek(spec: CommandSpec, name: string, hot: HotKey, args?: readonly unknown[]): CachedReply | undefined {
    const signature = args === undefined ? spec.name : signatureOf(spec.name, args, spec.singleKey)
    // Through the HotKey's pointer to its entry; else under the registry's own string, as entries are stored (see
    // #read): the LRU's Map matches it by identity rather than by comparing characters.
    const cached = this.#parts.cache.hit(hot, signature)
    if (cached === undefined) return undefined
    const counters = this.#parts.counters
    counters.requests++
    counters.reads++
    recordRegistered(this.#parts.recorder, spec, args, name, hot)
    this.#hit(name, hot, cached)
    return cached
  }

  /**
   * The client's connection closed: a MULTI it had open is gone with it, and the writes it queued will never
   * run, so their fences lift (and L1 forgets the keys, in case EXEC ran just before the close).
   */
  connectionClosed(state: ConnectionState): void {
    state.inMulti = false
    state.watched = []
    this.#scripts.dropQueued(state)
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

  #read(
    spec: CommandSpec,
    args: readonly unknown[],
    state: ConnectionState,
    queued: boolean,
    keyIndex: number,
  ): Decision {
    const { lookup, counters } = this.#parts
    const key = args[keyIndex]
    const name = keyText(key)
    // The registry lookup first: it leaves V8's hash of the string cached for the recorder's candidate lookup.
    const hot = lookup(name)
    const reads =
      hot === undefined
        ? this.#record(spec, args, name, false)
        : recordRegistered(this.#parts.recorder, spec, args, name, hot)
    counters.reads++
    if (hot === undefined) {
      // Misses count only for keys the recorder tracks, from the replies missSampleWeight picks: watching a
      // reply is the largest part of what the core adds to a read it does not mitigate.
      const weight = missSampleWeight(reads)
      return weight === 0 ? undefined : this.#watchMiss(name, weight)
    }
    if (!lossless(key, name)) return undefined
    if (hot.mitigation === 'split') {
      return keyIndex === 0
        ? this.#splitKeys.route(spec.name, args.slice(1), name, hot, queued, state)
        : this.#splitKeys.foldFor(hot)
    }
    // After a script of this connection, L1 and reads in flight may not yet know what it wrote.
    if (queued || state.unsettledScripts > 0 || !spec.cacheable) return undefined
    switch (hot.mitigation) {
      case 'local_cache':
        // Under the registry's own string, as peek() looks entries up: the LRU's Map then matches by identity.
        return this.#fromCache(spec, args, hot.key, hot, keyIndex)
      case 'replica_read':
        return this.#fromReplica(spec, args, name, hot)
      default:
        return this.#coalesced(spec, args, name, hot, keyIndex)
    }
  }

  // The same command on a replica within the lag bound; the primary when none is, when this process's write to
  // the key is in flight, or when the replica fails (FALL_THROUGH: the caller never sees a replica's failure).
  #fromReplica(spec: CommandSpec, args: readonly unknown[], name: string, hot: HotKey): Route | undefined {
    if (this.#fences.has(name)) return undefined
    const read = this.#parts.replicaRead(name, spec.name, args)
    if (read === undefined) return undefined
    return {
      kind: 'deferred',
      reply: read.then(
        (reply) => {
          if (reply === null) this.#onMiss(name, hot)
          return reply
        },
        () => {
          this.#parts.counters.replicaReadsFellBack++
          return Promise.reject(FALL_THROUGH)
        },
      ),
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
    const cached = cache.hit(hot, signature)
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
    if (this.#fences.has(name)) return undefined
    const counters = this.#parts.counters
    const signature = signatureOf(spec.name, args, keyIndex)
    const shared = this.#flights.join(name, signature)
    if (shared !== undefined) {
      hot.readsJoined++
      counters.coalescedReadsJoined++
      // Each caller answered nil goes to its database itself: a miss of its own, as the sender's is.
      return { kind: 'deferred', reply: shared.then((reply) => this.#missed(name, hot, reply)) }
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

  // MGET and the other reads of several keys: every key recorded; MGET's local_cache keys come from L1, the
  // rest stay in one MGET on the client's connection (so it keeps its place among the client's commands).
  #readMany(spec: CommandSpec, args: readonly unknown[], queued: boolean): Decision {
    const { lookup, counters } = this.#parts
    const indexes = keyIndexes(spec, args)
    let local: number[] | undefined
    let split: HotKey[] | undefined
    for (const index of indexes) {
      const name = keyText(args[index])
      const hot = lookup(name)
      this.#record(spec, args, name, false)
      counters.reads++
      if (hot?.mitigation === 'split') {
        split ??= []
        split.push(hot)
      }
      if (hot?.mitigation !== 'local_cache') continue
      local ??= []
      local.push(index)
    }
    if (split !== undefined) return this.#foldAll(split)
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

  #write(spec: CommandSpec, args: readonly unknown[], state: ConnectionState, queued: boolean): Decision {
    const { lookup, counters, invalidate } = this.#parts
    const indexes = spec.singleKey >= 0 ? undefined : keyIndexes(spec, args)
    // Scripts name their keys by count, so a one-key command (most writes) skips the lookup.
    const script = indexes !== undefined && writesUndeclared(spec.name)
    // FLUSHALL, FLUSHDB and SWAPDB write the whole keyspace and name no key.
    if (indexes?.length === 0 && !script) return this.#flush()
    const written = indexes === undefined ? undefined : new Set(writtenKeyIndexes(spec, args))
    let registered: string[] | undefined
    let split: HotKey[] | undefined
    for (let i = 0, n = indexes?.length ?? 1; i < n; i++) {
      const index = indexes === undefined ? spec.singleKey : (indexes[i] as number)
      const name = keyText(args[index])
      const hot = lookup(name)
      const write = written === undefined || written.has(index)
      this.#record(spec, args, name, write)
      if (hot?.mitigation === 'split') {
        split ??= []
        split.push(hot)
      }
      if (!write) {
        counters.reads++
        continue
      }
      counters.writes++
      invalidate(name)
      if (hot === undefined) continue
      registered ??= []
      registered.push(name)
      this.#fences.raise(name)
    }
    if (split !== undefined) {
      const only = split[0] as HotKey
      const decision =
        indexes === undefined && spec.singleKey === 0
          ? this.#splitKeys.route(spec.name, args.slice(1), only.key, only, queued, state)
          : this.#foldAll(split)
      if (decision !== undefined) {
        if ('kind' in decision) {
          const reply = this.#fences.liftAfter(registered as string[], decision.reply)
          return { kind: 'deferred', ordered: decision.ordered, pipelined: decision.pipelined, reply }
        }
        // Decided again once the key is folded: the fences are raised again then.
        if (registered !== undefined) this.#fences.lift(registered)
        return decision
      }
    }
    if (script && this.#parts.l1InUse()) return this.#script(registered, state, queued)
    if (registered === undefined) return undefined
    if (queued) {
      // Inside MULTI the write happens at EXEC: the fence holds until then.
      state.queuedWrites.push(...registered)
      return undefined
    }
    return this.#fences.sendThenLift(registered)
  }

  #transaction(spec: CommandSpec, args: readonly unknown[], state: ConnectionState): Decision {
    if (spec.name === 'watch') {
      watching(state, args)
      return this.#watch(args)
    }
    if (spec.name === 'multi') {
      state.inMulti = true
      return undefined
    }
    if (spec.name === 'unwatch') state.watched = []
    if (spec.name !== 'exec' && spec.name !== 'discard') return undefined
    state.inMulti = false
    const watched = state.watched
    if (watched.length > 0) state.watched = []
    const names = state.queuedWrites
    const scripts = state.queuedScripts
    if (names.length === 0 && scripts === 0) {
      return spec.name === 'exec' && watched.length > 0 ? this.#watchedExec(watched, undefined) : undefined
    }
    state.queuedWrites = []
    state.queuedScripts = 0
    const settled = this.#settleWrites(names, state, scripts)
    return spec.name === 'exec' && watched.length > 0 ? this.#watchedExec(watched, settled) : settled
  }

  // An EXEC after WATCH: a nil answer (not an error, not an empty array) is a transaction aborted by WATCH.
  #watchedExec(watched: readonly string[], inner: Route | undefined): Route {
    const settleInner = inner?.kind === 'send' ? inner.settle : undefined
    return {
      kind: 'send',
      settle: (error, reply) => {
        if (error === null && reply === null) this.#parts.watchAborted(watched)
        return settleInner === undefined ? (error ?? reply) : settleInner(error, reply)
      },
    }
  }

  // A script or function: its declared keys fenced like any write's; what it wrote without declaring reaches L1
  // through tracking, and its connection reads past L1 until the barrier says it has (ScriptBarriers).
  #script(registered: string[] | undefined, state: ConnectionState, queued: boolean): Route | undefined {
    this.#scripts.sent(state, queued)
    if (!queued) return this.#settleWrites(registered ?? [], state, 1)
    if (registered !== undefined) state.queuedWrites.push(...registered)
    return undefined
  }

  // Writes answered: the fences of `names` lift, and `scripts` of this connection start their barrier.
  #settleWrites(names: string[], state: ConnectionState, scripts: number): Route {
    if (scripts === 0) return this.#fences.sendThenLift(names)
    return {
      kind: 'send',
      settle: (error, reply) => {
        if (names.length > 0) this.#fences.lift(names)
        this.#scripts.answered(state, scripts)
        return error ?? reply
      },
    }
  }

  // WATCH of a split key would watch only its base key: the key is folded first.
  #watch(args: readonly unknown[]): SplitWait | undefined {
    let split: HotKey[] | undefined
    for (const key of args) {
      const hot = this.#parts.lookup(keyText(key))
      if (hot?.mitigation === 'split') {
        split ??= []
        split.push(hot)
      }
    }
    return split === undefined ? undefined : this.#foldAll(split)
  }

  // A command naming split keys beside others (or a script declaring one) runs on the base keys, once folded.
  #foldAll(split: readonly HotKey[]): SplitWait | undefined {
    const waits: Array<Promise<Error | undefined>> = []
    for (const hot of split) {
      const wait = this.#splitKeys.foldFor(hot)
      if (wait !== undefined) waits.push(wait.ready)
    }
    if (waits.length === 0) return undefined
    return { ready: Promise.all(waits).then((errors) => errors.find((error) => error !== undefined)) }
  }

  /**
   * A command that waits for `ready`, then is decided again; `holdConnection` when the connection's later
   * commands are not already behind it (they are when it is itself being decided behind an earlier one).
   */
  #after(
    ready: Promise<unknown>,
    state: ConnectionState,
    holdConnection: boolean,
    decide: () => Decision,
  ): AfterRoute {
    let release!: () => void
    const done = new Promise<void>((resolve) => {
      release = resolve
    })
    if (holdConnection) this.#holdConnection(state, done)
    const route: AfterRoute = {
      kind: 'after',
      ready,
      next: () => {
        const inner = this.#place(decide(), state, false, decide)
        const settled = this.#settledOf(inner)
        if (settled === undefined) release()
        else settled.then(release)
        return inner
      },
    }
    this.#afterDone.set(route, done)
    return route
  }

  // Waits for a split key's classification or fold; a fold that failed fails the command with its reason.
  #waitThen(
    wait: SplitWait,
    state: ConnectionState,
    holdConnection: boolean,
    decide: () => Decision,
  ): AfterRoute {
    let failure: Error | undefined
    const ready = wait.ready.then((error) => {
      failure = error
    })
    return this.#after(ready, state, holdConnection, () =>
      failure === undefined ? decide() : { kind: 'deferred', reply: Promise.reject(failure) },
    )
  }

  // What settles once a route's command has been carried out, when the connection's later commands must wait.
  #settledOf(route: Route | undefined): Promise<void> | undefined {
    if (route === undefined) return undefined
    if (route.kind === 'after') return this.#afterDone.get(route)
    if (route.kind === 'deferred' && route.ordered === true) return route.reply.then(noop, noop)
    return undefined
  }

  #holdConnection(state: ConnectionState, done: Promise<void>): void {
    state.tail = done
    done.then(() => {
      if (state.tail === done) state.tail = undefined
    })
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

  #record(spec: CommandSpec, args: readonly unknown[] | undefined, name: string, write: boolean): number {
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

  #missed(name: string, hot: HotKey, reply: unknown): unknown {
    if (reply === null) this.#onMiss(name, hot)
    return reply
  }

  #onMiss(name: string, hot: HotKey): void {
    this.#parts.recorder.recordMiss(name)
    hot.misses++
  }
}

function noop(): void {}

// The most keys one connection's WATCHes are remembered for; a transaction watching more is counted on these.
const MAX_WATCHED = 64

// Remembers the keys a WATCH names, for counting an abort against them.
function watching(state: ConnectionState, args: readonly unknown[]): void {
  for (const key of args) {
    if (state.watched.length >= MAX_WATCHED) return
    const name = keyText(key)
    if (!state.watched.includes(name)) state.watched.push(name)
  }
}
