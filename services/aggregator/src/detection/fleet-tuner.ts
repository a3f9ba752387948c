import {
  type DetectionTuning,
  encodeTuning,
  type HeatsinkNames,
  MAX_WATCHED_KEYS,
  signRegistryMessage,
  WIRE_VERSION,
} from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Crossing, FleetReporting } from './hot-key-rule.js'
import type { WindowCounters } from './window-counters.js'

/** How many windows agents keep reporting a watched key after the message that named it. */
export const WATCH_WINDOWS = 5

/**
 * The fleet is taken as the most agents counted in any of the last this many windows, so the floor falls as soon
 * as agents join but rises only once they have been gone this long. A recent window's count can fall short with
 * no agent leaving: under load, an agent's reports arrive windows late (seen in the fleet test under the full
 * suite: with the last three windows counted, 200 agents read as 167-199, or as a handful, and the floor rose to
 * 6 or to 100 where 5 was due). An older window's count is complete by now; and a floor too high misses keys,
 * where one too low for a while only costs report bytes.
 */
export const FLEET_MEMORY_WINDOWS = 20

export interface FleetTunerOptions {
  redis: Redis | Cluster
  names: HeatsinkNames
  counters: WindowCounters
  windowMs: number
  now: () => number
  /** Signs what is published, as registry events are (HEATSINK_REGISTRY_KEY). */
  registryKey: string | null
}

/**
 * Makes detection independent of how thinly a hot key is spread over the fleet (with 50 agents and a
 * fixed report floor, a key hot cluster-wide but seen 5 times per agent fell below every agent's floor and out of
 * every top K, and was missed). Two steps, the distributed top-k of TPUT (Cao and Wang, 2004):
 *
 * 1. The report floor is the hot threshold per window divided by the agents reporting. A key whose cluster-wide
 *    count reaches the threshold reaches threshold / agents on at least one agent, so some agent reports it.
 * 2. A key whose reported sum is short of the threshold but whose upper bound (applyReport-1.lua: the sum plus
 *    floor - 1 for every agent that did not report it) reaches it, or that is warm, is watched: agents count it
 *    exactly and report it whenever requested for WATCH_WINDOWS windows, which makes its next sums exact.
 *
 * Every window the tuner counts the agents that reported in recent windows and publishes the floor and its
 * watched keys on `names.tuningChannel` (and keeps them at `names.tuningKey` for agents that start later).
 * Replicas tune independently; agents take the union of their watched keys.
 */
export class FleetTuner implements FleetReporting {
  readonly #options: FleetTunerOptions
  readonly #hotPerWindow: number
  // Key -> [until when (epoch ms), the largest sum seen], to keep the strongest when there are too many.
  readonly #watched = new Map<string, { until: number; sum: number }>()
  #agents = 1
  #published = ''

  constructor(options: FleetTunerOptions) {
    this.#options = options
    this.#hotPerWindow = options.counters.hotPerWindow
  }

  get activeAgents(): number {
    return this.#agents
  }

  get reportFloor(): number {
    return Math.max(1, Math.floor(this.#hotPerWindow / this.#agents))
  }

  /** Keys watched now. */
  get watchedKeys(): number {
    return this.#watched.size
  }

  /** Keys a report left unresolved (or warm): watched from the next publication. */
  watch(found: readonly Crossing[]): void {
    const until = this.#options.now() + WATCH_WINDOWS * this.#options.windowMs
    for (const { key, count } of found) {
      const entry = this.#watched.get(key)
      if (entry === undefined) this.#watched.set(key, { until, sum: count })
      else {
        entry.until = until
        entry.sum = Math.max(entry.sum, count)
      }
    }
  }

  /** Once per window: counts the fleet, drops lapsed watches, publishes. */
  async tick(): Promise<void> {
    const { counters, windowMs, now } = this.#options
    const at = now()
    const previousWindow = Math.floor(at / windowMs) * windowMs - windowMs
    const seen = await Promise.all(
      Array.from({ length: FLEET_MEMORY_WINDOWS }, (_, back) =>
        counters.agentsIn(previousWindow - back * windowMs),
      ),
    )
    this.#agents = Math.max(1, ...seen)
    for (const [key, entry] of this.#watched) if (entry.until <= at) this.#watched.delete(key)
    await this.#publish(at)
  }

  async #publish(at: number): Promise<void> {
    const { redis, names, registryKey } = this.#options
    const watch = [...this.#watched]
      .sort((a, b) => b[1].sum - a[1].sum)
      .slice(0, MAX_WATCHED_KEYS)
      .map(([key]) => key)
    const fingerprint = `${this.reportFloor}\n${watch.join('\n')}`
    // Unchanged tuning is published again only every tenth window: agents that missed it read the key.
    if (fingerprint === this.#published && Math.floor(at / this.#options.windowMs) % 10 !== 0) return
    const tuning: DetectionTuning = {
      v: WIRE_VERSION,
      kind: 'tuning',
      at,
      activeAgents: this.#agents,
      reportFloor: this.reportFloor,
      watch,
      watchWindows: WATCH_WINDOWS,
    }
    const text =
      registryKey === null ? encodeTuning(tuning) : signRegistryMessage(encodeTuning(tuning), registryKey)
    await redis.publish(names.tuningChannel, text)
    await redis.set(names.tuningKey, text, 'PX', 60_000)
    this.#published = fingerprint
  }
}
