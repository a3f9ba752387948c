import { CommandForm, type CommandSpec, lookupCommand } from '@heatsink/commands'
import type { WindowRecorder } from '@heatsink/sketch'
import type { Splitter } from '@heatsink/split'
import {
  delAndBreakLeases,
  type FillAnnouncer,
  type SetArguments,
  setAndBreakLease,
} from '@heatsink/stampede'
import type { Callback, Redis, RedisKey } from 'ioredis'
import { keyName, keysOf, nodeify, takeCallback } from './command-args.js'
import { lossless } from './core/lossless-key.js'
import { recordCommand } from './core/record-command.js'
import { SPLIT_ROUTES, type SplitRoute } from './core/split-routes.js'
import { missSampleWeight } from './miss-sampling.js'
import type { MultiGet } from './multi-get.js'
import type { HotKey } from './registry-view.js'
import { SplitCommands } from './split-commands.js'
import type { SplitStrategy } from './split-strategy.js'
import type { AgentCounters } from './stats.js'

/** What the wrapped commands read and act on: the agent's parts. */
export interface WrappedCommandsParts {
  data: Redis
  /** Lease keys by name, and where the ends of the leases a write breaks are announced. */
  leases: FillAnnouncer
  /** The key's registry entry as this agent sees it. */
  lookup(name: string): HotKey | undefined
  recorder: WindowRecorder
  counters: AgentCounters
  splitter: Splitter
  split: SplitStrategy
  multiGet: MultiGet
  /** This process wrote `name` (or is about to): L1, loads and reads in flight forget it. */
  invalidate(name: string): void
  /** Tells every other agent that these registered keys were written. */
  publish(names: string[]): void
}

type Variadic = (...args: unknown[]) => Promise<unknown>

const SET_SPEC = lookupCommand('set') as CommandSpec

/**
 * The agent object's own commands (`createAgent`'s API, before the ioredis front door routed every command):
 * ioredis's get, set, del and mget and the counter, set and sorted-set commands, one method each, with ioredis's
 * arguments and results. Reads are counted and mitigated as the registry says; SET and DEL break getOrLoad
 * leases, evict this process's L1 before they are sent and again once answered, and tell the other agents.
 */
export class WrappedCommands {
  readonly #parts: WrappedCommandsParts
  /** INCR, SADD, ZRANGE...: over the shards of a split key, else on Redis unchanged. */
  readonly split: SplitCommands

  constructor(parts: WrappedCommandsParts) {
    this.#parts = parts
    this.split = new SplitCommands({
      data: parts.data,
      splitter: parts.splitter,
      strategy: parts.split,
      lookup: parts.lookup,
      record: (name, write, spec, args) => {
        parts.counters.requests++
        recordCommand(parts.recorder, spec, args, name, write)
        if (write) this.#wrote(name)
        else parts.counters.reads++
      },
    })
  }

  /** ioredis GET: from L1 for local_cache keys, the aggregate for split keys, from Redis otherwise. */
  readonly get: Redis['get'] = (key: RedisKey, callback?: Callback<string | null>) => {
    const { lookup, recorder, counters, data } = this.#parts
    const name = typeof key === 'string' ? key : key.toString()
    // The registry lookup first: it leaves V8's hash of the string cached for the recorder's candidate lookup.
    const hot = lookup(name)
    const reads = recorder.record(name, false, CommandForm.get)
    counters.requests++
    counters.reads++
    if (hot !== undefined) return nodeify(hot.strategy.get(key, name, hot), callback)
    // Misses count only for keys the recorder tracks, and only from the replies missSampleWeight picks: watching a
    // reply costs a promise reaction, the largest part of what the agent adds to a read it does not mitigate.
    const weight = missSampleWeight(reads)
    return nodeify(weight === 0 ? data.get(key) : this.#readSampled(key, name, weight), callback)
  }

  /**
   * ioredis SET, every form, through a script that also breaks any getOrLoad lease on the key, so no load in
   * flight anywhere overwrites it; evicts the key from L1 here at once and, once written, on every agent.
   */
  readonly set = ((key: RedisKey, ...rest: unknown[]) => {
    const { data, leases, lookup, counters, splitter, split } = this.#parts
    const callback = takeCallback(rest)
    const name = keyName(key)
    counters.requests++
    recordCommand(this.#parts.recorder, SET_SPEC, [key, ...rest], name, true)
    this.#wrote(name)
    const hot = lookup(name)
    // A split key's plain value is kept as N copies: a write goes to all of them, a read to one.
    const copies = SPLIT_ROUTES.get('set') as SplitRoute
    const pending =
      hot?.mitigation === 'split' && copies.splittable?.(rest) !== false
        ? copies.run(splitter, name, split.factorOf(hot), rest)
        : lossless(key, name)
          ? setAndBreakLease(data, leases, name, ...(rest as SetArguments))
          : (Reflect.apply(data.set as Variadic, data, [key, ...rest]) as Promise<unknown>)
    return nodeify(this.#written([name], pending), callback)
  }) as Redis['set']

  /** ioredis DEL, variadic or with an array, breaking leases and evicting like set. */
  readonly del = ((...args: unknown[]) => {
    const callback = takeCallback(args)
    const keys = keysOf(args)
    const names = keys.map(keyName)
    this.#parts.counters.requests++
    for (const name of names) {
      this.#parts.recorder.record(name, true, CommandForm.other)
      this.#wrote(name)
    }
    return nodeify(this.#written(names, this.#delete(keys, names, args)), callback)
  }) as Redis['del']

  /** ioredis MGET, variadic or with an array; local_cache keys come from L1 and the rest in one MGET. */
  readonly mget = ((...args: unknown[]) => {
    const { lookup, recorder, counters, multiGet } = this.#parts
    const callback = takeCallback(args)
    const keys = keysOf(args)
    const names = keys.map(keyName)
    counters.requests++
    const local: number[] = []
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string
      recorder.record(name, false, CommandForm.stringOther)
      counters.reads++
      if (lookup(name)?.strategy.servesReads) local.push(i)
    }
    return nodeify(multiGet.run(keys, names, local), callback)
  }) as Redis['mget']

  #readSampled(key: RedisKey, name: string, weight: number): Promise<string | null> {
    const recorder = this.#parts.recorder
    return this.#parts.data.get(key).then((value) => {
      if (value === null) recorder.recordMiss(name, weight)
      return value
    })
  }

  // After a write was recorded: counted, and forgotten by this process's L1.
  #wrote(name: string): void {
    this.#parts.counters.writes++
    this.#parts.invalidate(name)
  }

  // A DEL through the lease-breaking script, one key or several. A key that is not UTF-8 cannot be a
  // getOrLoad key (those are strings) and holds no lease; a DEL naming one goes to Redis unchanged.
  #delete(keys: readonly RedisKey[], names: readonly string[], args: unknown[]): Promise<unknown> {
    const data = this.#parts.data
    if (names.length === 0 || !keys.every((key, i) => lossless(key, names[i] as string))) {
      return Reflect.apply(data.del as Variadic, data, args) as Promise<unknown>
    }
    return delAndBreakLeases(data, this.#parts.leases, names)
  }

  // After a write settles: evict again (a fill may have read the old value meanwhile) and tell the other agents.
  #written<T>(names: readonly string[], pending: Promise<T>): Promise<T> {
    const { lookup, invalidate, publish } = this.#parts
    const after = () => {
      const registered: string[] = []
      for (const name of names) {
        invalidate(name)
        if (lookup(name) !== undefined) registered.push(name)
      }
      if (registered.length > 0) publish(registered)
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
