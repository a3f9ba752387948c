import { CommandForm, knownForms } from '@heatsink/commands'
import type { HeatsinkNames, WindowReport } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { aggregatorScripts } from '../lua/scripts.js'
import { counterShard } from './counter-shard.js'

/** Cluster-wide counts of one key in one window. */
export interface KeyCounts {
  count: number
  writes: number
  misses: number
}

/** A key whose cluster-wide count reached the hot threshold with the report just applied. */
export interface Crossing extends KeyCounts {
  key: string
  windowStart: number
}

/** What applying a report found: keys that crossed the threshold, and keys that rose to half of it. */
export interface Applied {
  crossings: Crossing[]
  /** Below the threshold in this window but at least half of it: worth judging over a sliding second. */
  warm: Crossing[]
  /** Below half the threshold, but possibly at it once the agents that did not report them are counted. */
  unresolved: Crossing[]
}

/** What the control plane told agents about reporting, which bounds what unreported agents saw. */
export interface FleetReporting {
  /** Agents reporting, as the control plane knows the fleet. */
  readonly activeAgents: number
  /** The report floor agents were told. */
  readonly reportFloor: number
}

export interface WindowCountersOptions {
  names: HeatsinkNames
  /** Counter shards per window (1 on a standalone Redis; more spread a window over a Cluster's masters). */
  shards: number
  /** Nominal window length: thresholds are per window of this length, whatever a flushed report says. */
  windowMs: number
  /** Requests per second, cluster-wide, at which a key is hot. */
  hotRps: number
  /** How long a window's counters are kept, long enough for the cool-down check to read them. */
  retainMs: number
}

/**
 * The cluster-wide per-window sums, kept in Redis so that any replica can apply any report: replicas hold no
 * counting state, and one that dies loses nothing. Applying is idempotent (see applyReport-1.lua).
 */
export class WindowCounters {
  readonly #redis: Redis | Cluster
  readonly #options: WindowCountersOptions
  readonly #hotPerWindow: number

  constructor(redis: Redis | Cluster, options: WindowCountersOptions) {
    this.#redis = redis
    this.#options = options
    this.#hotPerWindow = Math.max(1, Math.ceil((options.hotRps * options.windowMs) / 1000))
  }

  /** Requests per window at which a key is hot. */
  get hotPerWindow(): number {
    return this.#hotPerWindow
  }

  /** The nominal window length the thresholds are for. */
  get windowMs(): number {
    return this.#options.windowMs
  }

  /** Folds a report's candidates into the sums; resolves to the keys that crossed, warmed, or need watching. */
  async apply(report: WindowReport, fleet: FleetReporting = SINGLE_AGENT): Promise<Applied> {
    const { shards, names, retainMs } = this.#options
    const byShard = new Map<number, Array<string | number>>()
    const forms = report.forms
    for (let i = 0; i < report.candidates.length; i++) {
      const candidate = report.candidates[i] as WindowReport['candidates'][number]
      const shard = counterShard(candidate.key, shards)
      let args = byShard.get(shard)
      if (args === undefined) {
        args = [
          report.agentId,
          this.#hotPerWindow,
          retainMs,
          Math.ceil(this.#hotPerWindow / 2),
          Math.max(1, fleet.activeAgents),
          fleet.reportFloor,
        ]
        byShard.set(shard, args)
      }
      // An agent that sends no forms (older than the field) may have seen any command: `other`, never splittable.
      const seen = forms === undefined ? CommandForm.other : knownForms(forms[i] ?? 0)
      args.push(candidate.key, candidate.count, candidate.writes, candidate.misses, seen)
    }
    const results = await Promise.all(
      [...byShard].map(([shard, args]) =>
        aggregatorScripts.applyReport(this.#redis, names.windowCountersKey(report.windowStart, shard), args),
      ),
    )
    const applied: Applied = { crossings: [], warm: [], unresolved: [] }
    for (const flat of results) {
      for (let i = 0; i < flat.length; i += 5) {
        const found: Crossing = {
          key: String(flat[i]),
          windowStart: report.windowStart,
          count: Number(flat[i + 1]),
          writes: Number(flat[i + 2]),
          misses: Number(flat[i + 3]),
        }
        const kind = Number(flat[i + 4])
        if (kind === 1) applied.crossings.push(found)
        else if (kind === 0) applied.warm.push(found)
        else applied.unresolved.push(found)
      }
    }
    return applied
  }

  /** Every key's cluster-wide count in the window starting at windowStart, for the live view. */
  async totals(windowStart: number): Promise<Map<string, number>> {
    const { shards, names } = this.#options
    const hashes = await Promise.all(
      Array.from({ length: shards }, (_, shard) =>
        this.#redis.hgetall(names.windowCountersKey(windowStart, shard)),
      ),
    )
    const totals = new Map<string, number>()
    for (const fields of hashes) {
      // Cluster-wide counts are the fields "\n<key>"; per-agent ones start with the agent id, writes with " w".
      for (const [field, value] of Object.entries(fields)) {
        if (field.startsWith('\n')) totals.set(field.slice(1), Number(value))
      }
    }
    return totals
  }

  /** The cluster-wide counts of each key in the window starting at windowStart (absent: not reported). */
  async read(keys: readonly string[], windowStart: number): Promise<Array<KeyCounts | undefined>> {
    const { shards, names } = this.#options
    const values = await Promise.all(
      keys.map((key) =>
        this.#redis.hmget(
          names.windowCountersKey(windowStart, counterShard(key, shards)),
          `\n${key}`,
          ` w\n${key}`,
          ` m\n${key}`,
        ),
      ),
    )
    return values.map(([count, writes, misses]) =>
      count === null || count === undefined
        ? undefined
        : { count: Number(count), writes: Number(writes ?? 0), misses: Number(misses ?? 0) },
    )
  }

  /** The command forms reported on `key` in the windows starting at `windowStarts`, OR-ed (0: none reported). */
  async forms(key: string, windowStarts: readonly number[]): Promise<number> {
    const { shards, names } = this.#options
    const shard = counterShard(key, shards)
    const masks = await Promise.all(
      windowStarts.map((start) => this.#redis.hget(names.windowCountersKey(start, shard), ` f\n${key}`)),
    )
    let forms = 0
    for (const mask of masks) forms |= Number(mask ?? 0)
    return forms
  }

  /**
   * Folds a partial report's measured rates into the cluster-wide rate of each key; resolves to the keys whose
   * summed rate reached the threshold, as crossings of the window: their count is the rate over one window, and
   * their writes and misses keep the window's shares of the count so far (the mitigation is chosen from them).
   */
  async applyRates(report: WindowReport): Promise<Crossing[]> {
    const { shards, names, retainMs, windowMs, hotRps } = this.#options
    const byShard = new Map<number, Array<string | number>>()
    for (const [key, rate] of report.rates ?? []) {
      const shard = counterShard(key, shards)
      let args = byShard.get(shard)
      if (args === undefined) {
        args = [report.agentId, hotRps, retainMs]
        byShard.set(shard, args)
      }
      args.push(key, rate)
    }
    const results = await Promise.all(
      [...byShard].map(([shard, args]) =>
        aggregatorScripts.applyRates(this.#redis, names.windowCountersKey(report.windowStart, shard), args),
      ),
    )
    const crossings: Crossing[] = []
    for (const flat of results) {
      for (let i = 0; i < flat.length; i += 5) {
        const count = Math.round((Number(flat[i + 1]) * windowMs) / 1000)
        const sofar = Math.max(1, Number(flat[i + 2]))
        crossings.push({
          key: String(flat[i]),
          windowStart: report.windowStart,
          count,
          writes: Math.round((count * Number(flat[i + 3])) / sofar),
          misses: Math.round((count * Number(flat[i + 4])) / sofar),
        })
      }
    }
    return crossings
  }

  /** How many agents reported in the window starting at windowStart (the most any counter shard saw). */
  async agentsIn(windowStart: number): Promise<number> {
    const { shards, names } = this.#options
    const counts = await Promise.all(
      Array.from({ length: shards }, (_, shard) =>
        this.#redis.hget(names.windowCountersKey(windowStart, shard), ' agents'),
      ),
    )
    return Math.max(0, ...counts.map((count) => Number(count ?? 0)))
  }
}

// Without tuning every agent reports at its own floor; with one agent, no key goes unreported.
const SINGLE_AGENT: FleetReporting = { activeAgents: 1, reportFloor: 1 }
