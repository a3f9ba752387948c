import type { Splitter } from '@heatsink/split'
import type { Callback, Cluster, Redis, RedisKey } from 'ioredis'
import { keyName, nodeify, takeCallback } from './command-args.js'
import type { HotKey } from './registry-view.js'
import type { SplitStrategy } from './split-strategy.js'

/** What the split commands need from the agent. */
export interface SplitCommandsOptions {
  data: Redis | Cluster
  splitter: Splitter
  strategy: SplitStrategy
  /** The key's registry entry as this agent sees it. */
  lookup(name: string): HotKey | undefined
  /** Records a command on the key in the sketch and the agent's counters. */
  record(name: string, write: boolean): void
}

type Variadic = (...args: unknown[]) => Promise<unknown>

/**
 * The counter, set and sorted-set commands, under ioredis's names and signatures. For a key the registry marks
 * split they go to the splitter (a write to one shard, a read over all of them); for any other key they go to
 * Redis unchanged. Forms a split key cannot serve faithfully (ZRANGE's BYSCORE or REV options, ZADD's flags)
 * go to Redis unchanged too, on the base key.
 */
export class SplitCommands {
  readonly #options: SplitCommandsOptions

  constructor(options: SplitCommandsOptions) {
    this.#options = options
  }

  readonly incr = ((...args: unknown[]) =>
    this.#run('incr', true, args, (s, name, n) => s.incr(name, n))) as Redis['incr']

  readonly decr = ((...args: unknown[]) =>
    this.#run('decr', true, args, (s, name, n) => s.decr(name, n))) as Redis['decr']

  readonly incrby = ((...args: unknown[]) =>
    this.#run('incrby', true, args, (s, name, n, [delta]) =>
      s.incrby(name, n, delta as number | string),
    )) as Redis['incrby']

  readonly decrby = ((...args: unknown[]) =>
    this.#run('decrby', true, args, (s, name, n, [delta]) =>
      s.decrby(name, n, delta as number | string),
    )) as Redis['decrby']

  readonly sadd = ((...args: unknown[]) =>
    this.#run('sadd', true, args, (s, name, n, members) =>
      s.sadd(name, n, ...members.flat().map(String)),
    )) as Redis['sadd']

  readonly srem = ((...args: unknown[]) =>
    this.#run('srem', true, args, (s, name, n, members) =>
      s.srem(name, n, ...members.flat().map(String)),
    )) as Redis['srem']

  readonly smembers = ((...args: unknown[]) =>
    this.#run('smembers', false, args, (s, name, n) => s.smembers(name, n))) as Redis['smembers']

  readonly scard = ((...args: unknown[]) =>
    this.#run('scard', false, args, (s, name, n) => s.scard(name, n))) as Redis['scard']

  readonly sismember = ((...args: unknown[]) =>
    this.#run('sismember', false, args, (s, name, n, [member]) =>
      s.sismember(name, n, String(member)),
    )) as Redis['sismember']

  readonly zadd = ((...args: unknown[]) =>
    this.#run(
      'zadd',
      true,
      args,
      (s, name, n, pairs) => s.zadd(name, n, ...(pairs as Array<string | number>)),
      plainScorePairs,
    )) as Redis['zadd']

  readonly zrem = ((...args: unknown[]) =>
    this.#run('zrem', true, args, (s, name, n, members) =>
      s.zrem(name, n, ...members.flat().map(String)),
    )) as Redis['zrem']

  readonly zscore = ((...args: unknown[]) =>
    this.#run('zscore', false, args, (s, name, n, [member]) =>
      s.zscore(name, n, String(member)),
    )) as Redis['zscore']

  readonly zcard = ((...args: unknown[]) =>
    this.#run('zcard', false, args, (s, name, n) => s.zcard(name, n))) as Redis['zcard']

  readonly zrange = ((...args: unknown[]) =>
    this.#run(
      'zrange',
      false,
      args,
      (s, name, n, [start, stop, ...rest]) =>
        s.zrange(name, n, Number(start), Number(stop), withScores(rest)),
      isRankRange,
    )) as unknown as Redis['zrange']

  readonly zrevrange = ((...args: unknown[]) =>
    this.#run(
      'zrevrange',
      false,
      args,
      (s, name, n, [start, stop, ...rest]) =>
        s.zrevrange(name, n, Number(start), Number(stop), withScores(rest)),
      isRankRange,
    )) as unknown as Redis['zrevrange']

  // args as the caller gave them: the key, the command's arguments, maybe a trailing callback.
  #run<T>(
    command: string,
    write: boolean,
    args: unknown[],
    split: (splitter: Splitter, name: string, n: number, rest: unknown[]) => Promise<T>,
    splittable: (rest: readonly unknown[]) => boolean = () => true,
  ): Promise<T> {
    const { data, splitter, strategy, lookup, record } = this.#options
    const callback = takeCallback(args) as Callback<T> | undefined
    const [key, ...rest] = args as [RedisKey, ...unknown[]]
    const name = keyName(key)
    record(name, write)
    const hot = lookup(name)
    const result =
      hot !== undefined && hot.mitigation === 'split' && splittable(rest)
        ? split(splitter, name, strategy.factorOf(hot), rest)
        : (Reflect.apply(
            (data as unknown as Record<string, Variadic>)[command] as Variadic,
            data,
            args,
          ) as Promise<T>)
    return nodeify(result, callback)
  }
}

function withScores(rest: readonly unknown[]): 'WITHSCORES' | undefined {
  return rest.some((arg) => String(arg).toUpperCase() === 'WITHSCORES') ? 'WITHSCORES' : undefined
}

// ZRANGE's BYSCORE/BYLEX/REV/LIMIT forms are not rank ranges; only WITHSCORES may follow the ranks.
function isRankRange(rest: readonly unknown[]): boolean {
  return rest.slice(2).every((arg) => String(arg).toUpperCase() === 'WITHSCORES')
}

// ZADD flags (NX, XX, GT, LT, CH, INCR) would need every shard's view; only plain score-member pairs split.
function plainScorePairs(rest: readonly unknown[]): boolean {
  return rest.length >= 2 && rest.length % 2 === 0 && Number.isFinite(Number(rest[0]))
}
