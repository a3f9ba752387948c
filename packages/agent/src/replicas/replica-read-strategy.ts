import type { RedisKey } from 'ioredis'
import type { HotKey } from '../registry-view.js'
import type { FetchThrough, Loader, LoadOptions, MitigationStrategy, ReadThrough } from '../strategies.js'
import type { ReplicaReads } from './replica-reads.js'

/**
 * replica_read in the agent's own get and getOrLoad (createAgent's API, which issue 29 retires): they read the
 * primary, as for an unregistered key. Replica reads are the data-plane core's (the ioredis front door, the
 * proxy); this strategy only tells ReplicaReads when keys take and leave the mitigation.
 */
export class ReplicaReadStrategy implements MitigationStrategy {
  readonly servesReads = false
  readonly #replicas: ReplicaReads
  readonly #readThrough: ReadThrough
  readonly #fetch: FetchThrough

  constructor(replicas: ReplicaReads, readThrough: ReadThrough, fetch: FetchThrough) {
    this.#replicas = replicas
    this.#readThrough = readThrough
    this.#fetch = fetch
  }

  get(key: RedisKey, name: string, hot: HotKey): Promise<string | null> {
    return this.#readThrough(key, name, hot)
  }

  async load<T>(name: string, hot: HotKey, loader: Loader<T>, options: LoadOptions): Promise<T> {
    return (await this.#fetch(name, hot, loader, options)).value
  }

  enter(): void {
    this.#replicas.enter()
  }

  leave(hot: HotKey): void {
    this.#replicas.leave(hot.key)
  }
}
