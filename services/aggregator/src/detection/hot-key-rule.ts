import { RedisScript } from '@heatsink/redis-script'
import type { Cluster, Redis } from 'ioredis'

/*
 * How a key turns hot. Every question of "is this key hot" is answered here and in the two scripts beside this
 * file; everything else only feeds them reports or acts on what they find.
 *
 * 1. The threshold. A key is hot when its cluster-wide requests in one window reach hotPerWindow:
 *    HEATSINK_HOT_RPS x the window length, rounded up. Agents report cumulative counts per window; every
 *    report is folded into the window's sums by applyReport-1.lua, idempotently (each agent's largest count
 *    counts once), and the report that takes the sum to the threshold returns the key as a crossing, at once.
 * 2. The sliding second. A key a report takes to half the threshold or more (warm) but not to it is judged
 *    again over the last second: this window so far plus the previous window's count weighted by the part of
 *    it still inside that second (slidingSecondCrossings). Without it a surge that begins late in a window is
 *    judged on a fraction of a window, then on a new window that starts from zero.
 * 3. Measured rates. A partial report may carry each key's rate as the agent measured it; applyRates-1.lua sums
 *    every agent's latest rate and returns the keys whose sum reached HEATSINK_HOT_RPS, as crossings whose count
 *    is that rate over one window.
 * 4. Unreported agents. A key below half the threshold may be hot yet spread so thinly that most agents saw it
 *    fewer than the report floor times and did not report it. applyReport-1.lua returns it as unresolved when
 *    its upper bound (sum + unreporting agents x (floor - 1)) reaches the threshold; the fleet tuner watches it.
 *
 * A crossing goes to the Detector (detector.ts), which asks the mitigation policy (mitigation-policy.ts) what
 * to do with it; the cooldown sweeper (cooldown-sweeper.ts) decides when a hot key is cool again.
 */

// Beside this module; the build copies the .lua files into dist (scripts/copy-assets.mjs).
const APPLY_REPORT = RedisScript.fromFile(new URL('./applyReport-1.lua', import.meta.url))
const APPLY_RATES = RedisScript.fromFile(new URL('./applyRates-1.lua', import.meta.url))

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
  /** Keys this report missed whose cluster-wide misses are at the miss floor (WindowCountersOptions.missFloor). */
  missing: AtMissFloor[]
}

/** A key at the miss floor: its cluster-wide misses in the report's window so far. */
export interface AtMissFloor {
  key: string
  misses: number
}

/** What the control plane told agents about reporting, which bounds what unreported agents saw. */
export interface FleetReporting {
  /** Agents reporting, as the control plane knows the fleet. */
  readonly activeAgents: number
  /** The report floor agents were told. */
  readonly reportFloor: number
}

/** Requests per window at which a key is hot: the cluster-wide rate over one window, at least 1. */
export function hotPerWindow(hotRps: number, windowMs: number): number {
  return Math.max(1, Math.ceil((hotRps * windowMs) / 1000))
}

/** The first arguments of applyReport-1.lua for one agent's report: the thresholds it judges keys by. */
export function reportRuleArguments(
  agentId: string,
  hot: number,
  retainMs: number,
  fleet: FleetReporting,
  missFloor: number,
): Array<string | number> {
  return [
    agentId,
    hot,
    retainMs,
    Math.ceil(hot / 2),
    Math.max(1, fleet.activeAgents),
    fleet.reportFloor,
    missFloor,
  ]
}

/** Runs applyReport-1.lua on one window-shard (ARGV: reportRuleArguments, then the report's keys); what it found. */
export async function applyReportShard(
  redis: Redis | Cluster,
  windowShardKey: string,
  args: ReadonlyArray<string | number>,
  windowStart: number,
): Promise<Applied> {
  const [flat, atFloor] = await APPLY_REPORT.run<[Array<string | number>, Array<string | number>]>(
    redis,
    [windowShardKey],
    args,
  )
  const applied: Applied = { crossings: [], warm: [], unresolved: [], missing: [] }
  for (let i = 0; i < atFloor.length; i += 2)
    applied.missing.push({ key: String(atFloor[i]), misses: Number(atFloor[i + 1]) })
  for (let i = 0; i < flat.length; i += 5) {
    const found: Crossing = {
      key: String(flat[i]),
      windowStart,
      count: Number(flat[i + 1]),
      writes: Number(flat[i + 2]),
      misses: Number(flat[i + 3]),
    }
    const kind = Number(flat[i + 4])
    if (kind === 1) applied.crossings.push(found)
    else if (kind === 0) applied.warm.push(found)
    else applied.unresolved.push(found)
  }
  return applied
}

/**
 * Runs applyRates-1.lua on one window-shard (ARGV: agent id, HEATSINK_HOT_RPS, retention, then key and rate
 * pairs); resolves to the keys whose summed rate reached the threshold, as crossings of the window: their count
 * is the rate over one window, and their writes and misses keep the window's shares of the count so far (the
 * mitigation is chosen from them).
 */
export async function applyRatesShard(
  redis: Redis | Cluster,
  windowShardKey: string,
  args: ReadonlyArray<string | number>,
  windowStart: number,
  windowMs: number,
): Promise<Crossing[]> {
  const flat = await APPLY_RATES.run<Array<string | number>>(redis, [windowShardKey], args)
  const crossings: Crossing[] = []
  for (let i = 0; i < flat.length; i += 5) {
    const count = Math.round((Number(flat[i + 1]) * windowMs) / 1000)
    const sofar = Math.max(1, Number(flat[i + 2]))
    crossings.push({
      key: String(flat[i]),
      windowStart,
      count,
      writes: Math.round((count * Number(flat[i + 3])) / sofar),
      misses: Math.round((count * Number(flat[i + 4])) / sofar),
    })
  }
  return crossings
}

/** The window sums the sliding second reads: WindowCounters. */
export interface WindowSums {
  readonly windowMs: number
  readonly hotPerWindow: number
  read(keys: readonly string[], windowStart: number): Promise<Array<KeyCounts | undefined>>
}

/**
 * Warm keys whose count over the last second (this window so far, plus the part of the previous window still
 * inside that second) reaches the threshold.
 */
export async function slidingSecondCrossings(
  sums: WindowSums,
  warm: readonly Crossing[],
  now: number,
): Promise<Crossing[]> {
  const windowStart = warm[0]?.windowStart ?? 0
  const windowMs = sums.windowMs
  const elapsed = (now - windowStart) / windowMs
  if (elapsed >= 1 || elapsed < 0) return []
  const previous = await sums.read(
    warm.map((w) => w.key),
    windowStart - windowMs,
  )
  const carried = 1 - elapsed
  const hot: Crossing[] = []
  warm.forEach((w, i) => {
    const before = previous[i]
    if (before === undefined) return
    const count = Math.round(w.count + before.count * carried)
    if (count < sums.hotPerWindow) return
    hot.push({
      ...w,
      count,
      writes: Math.round(w.writes + before.writes * carried),
      misses: Math.round(w.misses + before.misses * carried),
    })
  })
  return hot
}
