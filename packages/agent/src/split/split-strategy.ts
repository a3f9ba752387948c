import type { Splitter } from '@heatsink/split'
import type { Loader, LoadOptions } from '../get-or-load/loader.js'
import type { FetchThrough } from '../get-or-load/strategies.js'
import type { AgentLogger } from '../options/agent-options.js'
import type { HotKey, MitigationStrategy } from '../registry/hot-key.js'

/** How long after a promotion writes stay on the base key: the time for every agent to hear of the split. */
const PROPAGATION_MS = 2000

/**
 * split: the key's writes spread over N shards and its reads aggregate them, through @heatsink/split. Entering
 * activates the layout; leaving (a demotion) folds every shard back into the key; a change of N reshards. The
 * router carries out the key's commands over the shards (SplitKeys); this strategy keeps its layout.
 */
export class SplitStrategy implements MitigationStrategy {
  readonly #splitter: Splitter
  readonly #fetch: FetchThrough
  readonly #log: AgentLogger
  readonly #now: () => number
  /** The N each split key is laid out with now (to notice a registry update that changes it), and its version. */
  readonly #active = new Map<string, { n: number; version: number }>()

  constructor(splitter: Splitter, fetch: FetchThrough, log: AgentLogger, now: () => number) {
    this.#splitter = splitter
    this.#fetch = fetch
    this.#log = log
    this.#now = now
  }

  /** The key's current split factor, resharding first when the registry changed it. */
  factorOf(hot: HotKey): number {
    const wanted = hot.entry.splitFactor
    const current = this.#active.get(hot.key)?.n
    if (current !== undefined && current !== wanted) {
      this.#active.set(hot.key, { n: wanted, version: hot.entry.version })
      this.#background('reshard', hot.key, this.#splitter.reshard(hot.key, current, wanted))
    }
    return wanted
  }

  async load<T>(name: string, hot: HotKey, loader: Loader<T>, options: LoadOptions): Promise<T> {
    return (await this.#fetch(name, hot, loader, options)).value
  }

  enter(hot: HotKey): void {
    const n = hot.entry.splitFactor
    const version = hot.entry.version
    this.#active.set(hot.key, { n, version })
    this.#background(
      'activate',
      hot.key,
      this.#splitter.activate(hot.key, n, { holdWritesUntil: this.#now() + PROPAGATION_MS, version }),
    )
  }

  leave(hot: HotKey): void {
    const n = this.#active.get(hot.key)?.n ?? hot.entry.splitFactor
    this.#active.delete(hot.key)
    this.#background('fold', hot.key, this.#splitter.fold(hot.key, n))
  }

  /**
   * Folds layout `n` of the key into its base key for the data plane, which found a command the split key cannot
   * answer faithfully, and marks it held in Redis: no agent's reconciler or activation reopens it while the key's
   * registry entry keeps its version; a registry change (a new version, a new N, a demotion) takes it from here.
   */
  hold(hot: HotKey, n: number): Promise<unknown> {
    return this.#splitter.hold(hot.key, n, hot.entry.version)
  }

  /** Keys split now, with their N and registry version, for the reconciler. */
  splitKeys(): Array<{ key: string; n: number; version: number }> {
    return [...this.#active].map(([key, { n, version }]) => ({ key, n, version }))
  }

  // Layout changes run beside the requests: the splitter keeps reads and writes correct while they are under way.
  #background(what: string, key: string, work: Promise<unknown>): void {
    work.catch((error: unknown) =>
      this.#log.error({ key, error: (error as Error).message }, `split ${what} failed`),
    )
  }
}
