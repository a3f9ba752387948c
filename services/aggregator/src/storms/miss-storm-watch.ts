import { keyHash, type MissStorm, type WindowReport } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Applied } from '../detection/hot-key-rule.js'
import type { RegistryPort } from '../detection/registry-port.js'
import type { WindowCounters } from '../detection/window-counters.js'
import type { KeyOwner } from './key-owner.js'
import { type Baseline, MissBaselines } from './miss-baselines.js'
import type { MissStormLog, RaisedStorm } from './miss-storm-log.js'

/** When a key's misses are a storm (HEATSINK_MISS_STORM_*). */
export interface MissStormSettings {
  /** Cluster-wide misses per second a window must reach. */
  minPerSecond: number
  /** ...and how many times the key's mean misses per second over the windows before it. */
  factor: number
  /** How many windows before it make the baseline. */
  baselineWindows: number
}

/**
 * Defaults: 100 misses a second is a database query every 10 ms for one key, more than any cache-aside key should
 * cost, while a key expiring once a second on each of a few dozen agents stays below it; 5x its baseline keeps a
 * key that always misses that much (a key never cached, a counter read before its first write) from raising a
 * storm every few seconds; 10 windows (10 s by default) is long enough to be the key's normal, short enough that a
 * storm's own windows soon become the baseline.
 */
export const DEFAULT_MISS_STORM: MissStormSettings = { minPerSecond: 100, factor: 5, baselineWindows: 10 }

/** Misses per window at which a key is judged: what WindowCounters' missFloor must be for the watch. */
export function missStormFloor(settings: MissStormSettings, windowMs: number): number {
  return Math.max(1, Math.ceil((settings.minPerSecond * windowMs) / 1000))
}

export interface MissStormWatchOptions {
  redis: Redis | Cluster
  /** The miss-storm marker key of a key hash (HeatsinkNames.missStormMarkerKey). */
  markerKey: (hash: string) => string
  counters: Pick<WindowCounters, 'read' | 'misses'>
  registry: Pick<RegistryPort, 'promote'>
  log: MissStormLog
  owner: KeyOwner
  settings: MissStormSettings
  windowMs: number
  replicaId: string
  now: () => number
  /** heatsink_miss_storms_total. */
  raised: { inc(): void }
  logger: Logger
}

/**
 * Watches each report's keys that missed for a miss storm: the window's cluster-wide misses reach the floor and
 * `factor` times the key's baseline (its mean over the windows before in which it was reported, at least half of
 * them). It is judged as each report is applied, on the window's sums so far, so a
 * storm is raised with the report that takes it over, not a window later.
 *
 * One event per storm, however many replicas apply reports of it: raising takes a marker key with SET NX, and
 * each replica that raised or found it extends it once in every window the key is still at the floor; once the
 * misses fall below the floor for three windows the marker lapses, and the next storm of the key is a new one.
 * Ingest's critical path is what this must not lengthen: the window sums come with the report's application
 * (WindowCounters' missFloor, set with missStormFloor), a key at the floor costs three reads once a window
 * (MissBaselines), and a marker command only while it storms.
 */
export class MissStormWatch {
  readonly #options: MissStormWatchOptions
  // What this replica learnt per window, so that a key costs a few reads per window rather than per report: every
  // agent's report of a window is judged against the same windows before it, and one marker extension a window
  // keeps a storm's marker (it lasts three) alive.
  readonly #windows = new Map<number, WindowState>()
  readonly #baselines: MissBaselines
  // Keys whose storm marker this replica raised or found, with the window it last did: their marker is extended
  // once a window while they stay at the floor, even when the storm's own windows have raised their baseline.
  readonly #ongoing = new Map<string, number>()

  constructor(options: MissStormWatchOptions) {
    this.#options = options
    this.#baselines = new MissBaselines(
      options.counters,
      options.settings.baselineWindows,
      options.windowMs,
      options.now,
    )
  }

  /** Judges the keys of a report just applied that took their misses to the floor; logged, never thrown. */
  async onReport(report: WindowReport, applied: Pick<Applied, 'missing'>): Promise<void> {
    if (applied.missing.length === 0) return
    const { windowStart } = report
    const state = this.#window(windowStart)
    const { factor } = this.#options.settings
    // Most keys at the floor are calm against a baseline already read, settled here with two map lookups; the
    // rest wait for the window's next round of baseline reads (one for every report of the turn), so a report
    // costs at most one promise, not one per key.
    let waits: Set<Promise<void>> | undefined
    for (const { key, misses } of applied.missing) {
      const known = state.normals.get(key)
      // A lower bound that no longer shows the misses calm: the key is judged again on its exact baseline.
      if (known !== undefined && !known.exact && known.mean !== undefined && misses >= factor * known.mean)
        state.normals.delete(key)
      if (!state.normals.has(key)) {
        let joined = state.reading.get(key)
        if (joined === undefined) {
          joined = this.#nextRound(state, windowStart)
          state.reading.set(key, joined)
        }
        if (misses > (joined.misses.get(key) ?? -1)) joined.misses.set(key, misses)
        // One round for most reports' keys; a second for the few whose read was under way when the report came.
        waits ??= new Set()
        waits.add(joined.done)
        continue
      }
      const normal = state.normals.get(key)?.mean
      const storming = normal !== undefined && misses >= factor * normal
      if (!storming && !this.#ongoing.has(key)) continue
      waits ??= new Set()
      waits.add(this.#mark(state, key, misses, normal, storming, windowStart))
    }
    if (waits === undefined) return
    try {
      await Promise.all(waits)
    } catch (error) {
      // Ingest goes on: a storm missed is logged, while a failing report would be retried and re-counted.
      this.#options.logger.error({ err: error, agentId: report.agentId }, 'miss storm check failed')
    }
  }

  // The window's keys whose baseline is not known yet are judged together once the reports of this turn are in:
  // one read of the baselines for all of them, each key judged on the most misses its reports carried (reports
  // that come while its read is under way included).
  #nextRound(state: WindowState, windowStart: number): Round {
    if (state.next !== undefined) return state.next
    const round: Round = { misses: new Map(), done: Promise.resolve() }
    state.next = round
    round.done = (async () => {
      await new Promise((resolve) => setImmediate(resolve))
      state.next = undefined
      const keys = [...round.misses.keys()]
      const { factor } = this.#options.settings
      // Most keys are calm by the settled windows alone; a storm, or one going on, needs the exact baseline.
      const enough = keys.map((key) =>
        this.#ongoing.has(key) ? Infinity : (round.misses.get(key) as number) / factor,
      )
      const baselines = await this.#baselines.means(keys, windowStart, enough).finally(() => {
        for (const key of keys) state.reading.delete(key)
      })
      const marking: Array<Promise<void>> = []
      keys.forEach((key, i) => {
        const baseline = baselines[i] as Baseline
        state.normals.set(key, baseline)
        const normal = baseline.mean
        const misses = round.misses.get(key) as number
        const storming = baseline.exact && normal !== undefined && misses >= factor * normal
        if (storming || this.#ongoing.has(key))
          marking.push(this.#mark(state, key, misses, normal, storming, windowStart))
      })
      await Promise.all(marking)
    })()
    return round
  }

  // A key storming, or whose storm this replica knows to be going on: its marker is extended once a window, or
  // taken and the storm raised. A key that misses a lot but steadily never gets here: it costs no marker command.
  async #mark(
    state: WindowState,
    key: string,
    misses: number,
    normal: number | undefined,
    storming: boolean,
    windowStart: number,
  ): Promise<void> {
    const { redis, markerKey, windowMs, replicaId } = this.#options
    const marker = markerKey(keyHash(key))
    const lasts = 3 * windowMs
    let held = state.held.get(key)
    if (held === undefined) {
      // A storm already raised goes on: its marker is extended (once a window), nothing is raised.
      held = redis.pexpire(marker, lasts).then((extended) => extended === 1)
      state.held.set(key, held)
    }
    if (await held) {
      this.#ongoing.set(key, windowStart)
      return
    }
    if (state.held.get(key) !== held) return
    if (!storming) {
      // Its marker lapsed: the storm this replica knew of is over.
      this.#ongoing.delete(key)
      return
    }
    state.held.set(key, Promise.resolve(true))
    this.#ongoing.set(key, windowStart)
    if ((await redis.set(marker, replicaId, 'PX', lasts, 'NX')) !== 'OK') return
    await this.#raise(key, misses, normal as number, windowStart)
  }

  #window(windowStart: number): WindowState {
    let state = this.#windows.get(windowStart)
    if (state === undefined) {
      const { windowMs } = this.#options
      // Reports come for the newest window or two; older windows' states are not asked for again.
      for (const start of this.#windows.keys())
        if (start < windowStart - 2 * windowMs) this.#windows.delete(start)
      // A storm whose key left the floor for longer than its marker lasts is over.
      for (const [key, seen] of this.#ongoing)
        if (seen < windowStart - 3 * windowMs) this.#ongoing.delete(key)
      state = { normals: new Map(), reading: new Map(), next: undefined, held: new Map() }
      this.#windows.set(windowStart, state)
    }
    return state
  }

  async #raise(key: string, misses: number, baseline: number, windowStart: number): Promise<MissStorm> {
    const { registry, owner, windowMs, replicaId, now, raised, logger, counters } = this.#options
    const perSecond = (n: number) => Math.round((n * 1000) / windowMs)
    const missesPerSecond = perSecond(misses)
    const [counts] = await counters.read([key], windowStart)
    const baselinePerSecond = perSecond(baseline)
    let action: RaisedStorm['action']
    let mitigation: RaisedStorm['mitigation'] = null
    try {
      // An automatic promotion never overrides what is registered: a key mitigated already keeps its mitigation.
      const { entry, created } = await registry.promote({
        key,
        mitigation: 'coalesce',
        source: 'auto',
        actor: replicaId,
        reason: `miss storm: ${missesPerSecond} misses/s, baseline ${baselinePerSecond} misses/s`,
        requestsPerSecond: counts === undefined ? null : perSecond(counts.count),
        log: logger,
      })
      action = created ? 'coalesce_applied' : 'already_mitigated'
      mitigation = entry.mitigation
    } catch (error) {
      logger.error({ err: error, key }, 'miss storm: coalescing the key failed')
      action = 'promotion_failed'
    }
    const storm = await this.#options.log.append({
      key,
      node: owner(key),
      missesPerSecond,
      baselinePerSecond,
      action,
      mitigation,
      at: now(),
    })
    raised.inc()
    logger.warn({ key, node: storm.node, missesPerSecond, baselinePerSecond, action }, 'miss storm')
    return storm
  }
}

/** What one replica learnt about one window's keys. */
interface WindowState {
  /** Baselines read: exact, or a lower bound that showed the misses calm. */
  normals: Map<string, Baseline>
  /** Keys at the floor whose baseline is being read, with the round that reads it. */
  reading: Map<string, Round>
  /** The round that keys not read yet join: it reads at the end of the turn. */
  next: Round | undefined
  /** Whether the key's storm marker is held (found and extended, or taken by this replica) in the window. */
  held: Map<string, Promise<boolean>>
}

/** One read of baselines for the keys of a window that reached the floor in one turn. */
interface Round {
  /** Each key's most misses in the reports that joined the round. */
  misses: Map<string, number>
  /** Settles once every key of the round is judged. */
  done: Promise<void>
}
