import { type CommandSpec, lookupCommand } from '@heatsink/commands'
import type { Splitter } from '@heatsink/split'
import type { Cluster, Redis, RedisKey } from 'ioredis'
import { keyName, nodeify, takeCallback } from './command-args.js'
import { SPLIT_ROUTES } from './core/split-routes.js'
import type { HotKey } from './registry-view.js'
import type { SplitStrategy } from './split-strategy.js'

/** What the split commands need from the agent. */
export interface SplitCommandsOptions {
  data: Redis | Cluster
  splitter: Splitter
  strategy: SplitStrategy
  /** The key's registry entry as this agent sees it. */
  lookup(name: string): HotKey | undefined
  /** Records a command on the key (its arguments, the key first, give its form) in the sketch and counters. */
  record(name: string, write: boolean, spec: CommandSpec, args: readonly unknown[]): void
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

  readonly incr = ((...args: unknown[]) => this.#run('incr', true, args)) as Redis['incr']
  readonly decr = ((...args: unknown[]) => this.#run('decr', true, args)) as Redis['decr']
  readonly incrby = ((...args: unknown[]) => this.#run('incrby', true, args)) as Redis['incrby']
  readonly decrby = ((...args: unknown[]) => this.#run('decrby', true, args)) as Redis['decrby']
  readonly sadd = ((...args: unknown[]) => this.#run('sadd', true, args)) as Redis['sadd']
  readonly srem = ((...args: unknown[]) => this.#run('srem', true, args)) as Redis['srem']
  readonly smembers = ((...args: unknown[]) => this.#run('smembers', false, args)) as Redis['smembers']
  readonly scard = ((...args: unknown[]) => this.#run('scard', false, args)) as Redis['scard']
  readonly sismember = ((...args: unknown[]) => this.#run('sismember', false, args)) as Redis['sismember']
  readonly zadd = ((...args: unknown[]) => this.#run('zadd', true, args)) as Redis['zadd']
  readonly zrem = ((...args: unknown[]) => this.#run('zrem', true, args)) as Redis['zrem']
  readonly zscore = ((...args: unknown[]) => this.#run('zscore', false, args)) as Redis['zscore']
  readonly zcard = ((...args: unknown[]) => this.#run('zcard', false, args)) as Redis['zcard']
  readonly zrange = ((...args: unknown[]) => this.#run('zrange', false, args)) as unknown as Redis['zrange']
  readonly zrevrange = ((...args: unknown[]) =>
    this.#run('zrevrange', false, args)) as unknown as Redis['zrevrange']

  // args as the caller gave them: the key, the command's arguments (arrays flattened, as ioredis does), maybe a
  // trailing callback. The split form of each command, and which argument forms it serves, come from the core's
  // table (SPLIT_ROUTES).
  #run(command: string, write: boolean, args: unknown[]): Promise<unknown> {
    const { data, splitter, strategy, lookup, record } = this.#options
    const callback = takeCallback(args)
    const [key, ...given] = args as [RedisKey, ...unknown[]]
    const name = keyName(key)
    const rest = given.flat()
    record(name, write, lookupCommand(command) as CommandSpec, [key, ...rest])
    const hot = lookup(name)
    const route = SPLIT_ROUTES.get(command)
    const result =
      hot !== undefined &&
      hot.mitigation === 'split' &&
      route !== undefined &&
      (route.splittable?.(rest) ?? true)
        ? route.run(splitter, name, strategy.factorOf(hot), rest)
        : (Reflect.apply(
            (data as unknown as Record<string, Variadic>)[command] as Variadic,
            data,
            args,
          ) as Promise<unknown>)
    return nodeify(result, callback)
  }
}
