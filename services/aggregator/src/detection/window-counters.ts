import { CommandForm, knownForms } from '@heatsink/commands'
import type { HeatsinkNames, WindowReport } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { counterShard } from './counter-shard.js'
import {
  type Applied,
  applyRatesShard,
  applyReportShard,
  type Crossing,
  type FleetReporting,
  hotPerWindow,
  type KeyCounts,
  reportRuleArguments,
} from './hot-key-rule.js'

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
  /**
   * Misses per window at which apply() returns a key in `missing` (the miss-storm watch's floor): the sums are
   * at hand as the report is folded in, so the watch need not read them again. Absent or 0: none.
   */
  missFloor?: number
}

/**
 * The cluster-wide per-window sums, kept in Redis so that any replica can apply any report: replicas hold no
 * counting state, and one that dies loses nothing. Applying is idempotent (see applyReport-1.lua). Which keys
 * the sums make hot is hot-key-rule.ts's.
 */
export class WindowCounters {
  readonly #redis: Redis | Cluster
  readonly #options: WindowCountersOptions
  readonly #hotPerWindow: number

  constructor(redis: Redis | Cluster, options: WindowCountersOptions) {
    this.#redis = redis
    this.#options = options
    this.#hotPerWindow = hotPerWindow(options.hotRps, options.windowMs)
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
        args = reportRuleArguments(
          report.agentId,
          this.#hotPerWindow,
          retainMs,
          fleet,
          this.#options.missFloor ?? 0,
        )
        byShard.set(shard, args)
      }
      // An agent that sends no forms (older than the field) may have seen any command: `other`, never splittable.
      const seen = forms === undefined ? CommandForm.other : knownForms(forms[i] ?? 0)
      args.push(candidate.key, candidate.count, candidate.writes, candidate.misses, seen)
    }
    const results = await Promise.all(
      [...byShard].map(([shard, args]) =>
        applyReportShard(
          this.#redis,
          names.windowCountersKey(report.windowStart, shard),
          args,
          report.windowStart,
        ),
      ),
    )
    const applied: Applied = { crossings: [], warm: [], unresolved: [], missing: [] }
    for (const found of results) {
      applied.missing.push(...found.missing)
      applied.crossings.push(...found.crossings)
      applied.warm.push(...found.warm)
      applied.unresolved.push(...found.unresolved)
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
    const values = await this.#fields(keys, windowStart, ['\n', ' w\n', ' m\n'])
    return keys.map((_, i) => {
      const count = values[3 * i]
      if (count === null || count === undefined) return undefined
      return {
        count: Number(count),
        writes: Number(values[3 * i + 1] ?? 0),
        misses: Number(values[3 * i + 2] ?? 0),
      }
    })
  }

  /** The cluster-wide misses of each key in the window starting at windowStart (null: not reported). */
  async misses(keys: readonly string[], windowStart: number): Promise<Array<number | null>> {
    // The miss-storm watch's baselines read hundreds of keys a window: two fields each, not read()'s three.
    const values = await this.#fields(keys, windowStart, ['\n', ' m\n'])
    return keys.map((_, i) => (values[2 * i] === null ? null : Number(values[2 * i + 1] ?? 0)))
  }

  // One HMGET per counter shard, not per key: each key's fields named by `prefixes`, in the keys' order (null:
  // absent).
  async #fields(
    keys: readonly string[],
    windowStart: number,
    prefixes: readonly string[],
  ): Promise<Array<string | null>> {
    const { shards, names } = this.#options
    const width = prefixes.length
    const byShard = new Map<number, number[]>()
    keys.forEach((key, i) => {
      const shard = counterShard(key, shards)
      const positions = byShard.get(shard)
      if (positions === undefined) byShard.set(shard, [i])
      else positions.push(i)
    })
    const values = new Array<string | null>(keys.length * width).fill(null)
    await Promise.all(
      Array.from(byShard, async ([shard, positions]) => {
        const fields: string[] = []
        for (const i of positions) for (const prefix of prefixes) fields.push(prefix + keys[i])
        const got = await this.#redis.hmget(names.windowCountersKey(windowStart, shard), ...fields)
        positions.forEach((i, j) => {
          for (let f = 0; f < width; f++) values[i * width + f] = got[j * width + f] ?? null
        })
      }),
    )
    return values
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

  /** Folds a partial report's measured rates into the cluster-wide rates; resolves to the keys that crossed. */
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
        applyRatesShard(
          this.#redis,
          names.windowCountersKey(report.windowStart, shard),
          args,
          report.windowStart,
          windowMs,
        ),
      ),
    )
    return results.flat()
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
