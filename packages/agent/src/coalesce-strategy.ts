import { type Generations, ReadCoalescer, unwrapStored } from '@heatsink/stampede'
import type { Cluster, Redis, RedisKey } from 'ioredis'
import type { HotKey } from './registry-view.js'
import type { AgentCounters } from './stats.js'
import type { FetchThrough, Loader, LoadOptions, MitigationStrategy } from './strategies.js'

/** What CoalesceStrategy needs. */
export interface CoalesceStrategyOptions {
  data: Redis | Cluster
  /** The stampede guard's generations, so that every invalidation the agent learns of detaches reads in flight. */
  generations: Generations
  fetch: FetchThrough
  /** Counts a read that found nothing. */
  onMiss(name: string, hot: HotKey): void
  counters: AgentCounters
}

/**
 * coalesce: concurrent plain reads of the key in this agent share one GET (Redis itself is the loader), so a
 * herd of misses on a hot key becomes one Redis read per agent; a read in flight when the key is written or
 * invalidated is not joined by later callers. getOrLoad goes to the stampede guard, which coalesces anyway.
 *
 * Plain reads answer what the application stored: a value getOrLoad wrote comes unwrapped from its envelope,
 * once per GET rather than once per caller.
 */
export class CoalesceStrategy implements MitigationStrategy {
  readonly servesReads = true
  readonly #reads: ReadCoalescer<string | null>
  readonly #options: CoalesceStrategyOptions
  /** GETs sent so far: a read that leaves it unchanged joined one in flight. */
  #sent = 0

  constructor(options: CoalesceStrategyOptions) {
    this.#options = options
    const data = options.data
    this.#reads = new ReadCoalescer((name) => {
      this.#sent++
      return data.get(name).then(unwrapStored)
    }, options.generations)
  }

  get(_key: RedisKey, name: string, hot: HotKey): Promise<string | null> {
    const { counters, onMiss } = this.#options
    const sent = this.#sent
    const read = this.#reads.get(name)
    if (this.#sent === sent) {
      hot.readsJoined++
      counters.coalescedReadsJoined++
    } else {
      hot.readsSent++
      counters.coalescedReadsSent++
    }
    return read.then((value) => {
      if (value === null) onMiss(name, hot)
      return value
    })
  }

  async load<T>(name: string, hot: HotKey, loader: Loader<T>, options: LoadOptions): Promise<T> {
    return (await this.#options.fetch(name, hot, loader, options)).value
  }

  enter(): void {}
  leave(): void {}
}
