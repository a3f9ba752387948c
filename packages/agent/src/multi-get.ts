import type { Redis, RedisKey } from 'ioredis'
import type { HotKey, RegistryView } from './registry-view.js'
import type { ReadThrough } from './strategies.js'

/** What an MGET needs from the agent. */
export interface MultiGetOptions {
  data: Redis
  view: RegistryView
  readThrough: ReadThrough
  onMiss(name: string, hot: HotKey | undefined): void
}

/**
 * MGET with the keys whose strategy serves reads (local_cache) taken out: those are read through their
 * strategy (L1), and the rest go to Redis in one MGET, so the caller still gets one array in its own order.
 * An MGET without such keys is sent unchanged.
 */
export class MultiGet {
  readonly #options: MultiGetOptions

  constructor(options: MultiGetOptions) {
    this.#options = options
  }

  /** `local`: indexes of the keys whose strategy serves reads. */
  run(keys: RedisKey[], names: readonly string[], local: readonly number[]): Promise<(string | null)[]> {
    return local.length === 0 ? this.#through(keys, names) : this.#split(keys, names, local)
  }

  #through(keys: RedisKey[], names: readonly string[]): Promise<(string | null)[]> {
    const { data, view, onMiss } = this.#options
    return data.mget(keys).then((values) => {
      for (let i = 0; i < values.length; i++) {
        const name = names[i] as string
        if (values[i] === null) onMiss(name, view.get(name))
      }
      return values
    })
  }

  async #split(
    keys: RedisKey[],
    names: readonly string[],
    local: readonly number[],
  ): Promise<(string | null)[]> {
    const { view, readThrough } = this.#options
    const isLocal = new Set(local)
    const remote = keys.flatMap((_, i) => (isLocal.has(i) ? [] : [i]))
    const [remoteValues, localValues] = await Promise.all([
      remote.length === 0
        ? []
        : this.#through(
            remote.map((i) => keys[i] as RedisKey),
            remote.map((i) => names[i] as string),
          ),
      Promise.all(
        local.map((i) => {
          const key = keys[i] as RedisKey
          const name = names[i] as string
          const hot = view.get(name)
          return hot === undefined ? readThrough(key, name, undefined) : hot.strategy.get(key, name, hot)
        }),
      ),
    ])
    const values = new Array<string | null>(keys.length)
    remote.forEach((index, j) => {
      values[index] = remoteValues[j] ?? null
    })
    local.forEach((index, j) => {
      values[index] = localValues[j] ?? null
    })
    return values
  }
}
