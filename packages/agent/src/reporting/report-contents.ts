import {
  type CompactCandidate,
  compactCandidate,
  type HotKeyStats,
  MAX_HOT_KEY_STATS,
  MAX_KEY_BYTES,
  MAX_SKETCH_SAMPLES,
  type SketchError,
  type WindowReportInput,
} from '@heatsink/protocol'
import type { HeavyHitter, WindowSummary } from '@heatsink/sketch'
import type { KeyStats } from '@heatsink/stampede'
import type { HotKey } from '../registry/hot-key.js'
import type { RegistryView } from '../registry/registry-view.js'

// What a window's report says of its keys: the candidates with their command forms, the registered keys'
// statistics, the sketch's error sample, each holding only keys the wire takes. The Reporter decides when a
// report goes and carries it; this decides what is in it.

/** getOrLoad's per-key counters (the stampede guard's). */
export interface LoadStats {
  /** A key's counters in the open window. */
  keyStats(key: string): KeyStats | undefined
  /** Every key's counters for the window now ending; the next starts at zero. */
  takeWindowStats(): Map<string, KeyStats>
}

/** Where a report's per-key statistics come from. */
export interface HotKeyStatsSources {
  view: RegistryView
  loads: LoadStats
  /** Writes per shard of each split key since the last call (and reset by it). */
  shardCounts: () => Map<string, number[]>
}

// Every registered key this agent did something for, with getOrLoad's counters and coalesced plain reads (a GET
// sent is the coalesce mitigation's upstream load): a key idle here is left out, as every agent would otherwise
// send every registered key every window, and the key's request count is in the candidates anyway (registered
// keys are pinned). A window's final report adds the keys getOrLoad served that are among its
// hitters, so the aggregator knows their collapse ratio too while the report stays bounded by the hitters.
export function reportedKeyStats(
  { view, loads, shardCounts }: HotKeyStatsSources,
  reset: boolean,
  hitters: readonly HeavyHitter[],
): HotKeyStatsInput[] {
  const taken = reset ? loads.takeWindowStats() : undefined
  const shards = reset ? shardCounts() : undefined
  const stats: HotKeyStatsInput[] = []
  for (const hot of view.values()) {
    if (stats.length < MAX_HOT_KEY_STATS) {
      const entry = keyStats(hot.key, taken === undefined ? loads.keyStats(hot.key) : taken.get(hot.key), hot)
      const perShard = shards?.get(hot.key)
      if (perShard !== undefined) stats.push({ ...entry, splitShardCounts: perShard })
      else if (Object.keys(entry).length > 1) stats.push(entry)
    }
    if (reset) hot.resetWindow()
  }
  if (taken === undefined || taken.size === 0) return stats
  for (const { key, misses } of hitters) {
    if (stats.length >= MAX_HOT_KEY_STATS) break
    const counted = taken.get(key)
    if (counted !== undefined && view.get(key) === undefined && onTheWire(key)) {
      stats.push({ ...keyStats(key, counted, undefined), misses })
    }
  }
  return stats
}

type HotKeyStatsInput = NonNullable<WindowReportInput['hotKeyStats']>[number]

// Counters left out read as 0 (the schema's default), so an idle key's entry is its name alone: every agent
// reports every registered key every window, and most of them are idle on most agents.
function keyStats(key: string, loads: KeyStats | undefined, hot: HotKey | undefined): HotKeyStatsInput {
  const counters: Omit<HotKeyStats, 'key' | 'splitShardCounts'> = {
    l1Hits: hot?.l1Hits ?? 0,
    l1Misses: hot?.l1Misses ?? 0,
    l1Fills: hot?.l1Fills ?? 0,
    coalescedWaiters: (loads?.coalescedWaiters ?? 0) + (hot?.readsJoined ?? 0),
    upstreamLoads: (loads?.upstreamLoads ?? 0) + (hot?.readsSent ?? 0),
    staleServes: loads?.staleServes ?? 0,
    leaseWaits: loads?.leaseWaits ?? 0,
    timeouts: loads?.timeouts ?? 0,
    misses: hot?.misses ?? 0,
  }
  const entry: HotKeyStatsInput = { key }
  for (const [name, value] of Object.entries(counters)) {
    if (value !== 0) entry[name as keyof typeof counters] = value
  }
  return entry
}

// The window's error sample for the wire: the summary, and the sampled keys that matter to operators by name
// (those reported as candidates, and the registered ones), for GET /hotkeys/{key}/stats.
export function sketchError(summary: WindowSummary, view: RegistryView): SketchError | undefined {
  const sample = summary.errorSample
  if (sample === undefined) return undefined
  const named = new Set(summary.hitters.map((hitter) => hitter.key))
  const keys: SketchError['keys'] = []
  for (const { key, estimate, exact } of sample.keys) {
    if (keys.length >= MAX_SKETCH_SAMPLES) break
    if ((named.has(key) || view.get(key) !== undefined) && onTheWire(key)) keys.push([key, estimate, exact])
  }
  const { sampled, meanRelativeError, maxRelativeError, bound, overBound } = sample
  return { sampled, meanRelativeError, maxRelativeError, bound, overBound, keys }
}

// The candidates, and beside them the command forms seen on each (one mask per candidate, in the same order).
export function candidatesAndForms(hitters: readonly HeavyHitter[]): {
  candidates: CompactCandidate[]
  forms: number[]
} {
  const candidates: CompactCandidate[] = []
  const forms: number[] = []
  for (const { key, count, reads, writes, misses, forms: seen } of hitters) {
    if (!onTheWire(key)) continue
    candidates.push(compactCandidate(key, count, reads, writes, misses))
    forms.push(seen)
  }
  return { candidates, forms }
}

/** Whether the wire takes `key`: one it refuses (empty, or over MAX_KEY_BYTES) would refuse the whole report. */
export function onTheWire(key: string): boolean {
  return key.length > 0 && (key.length * 3 <= MAX_KEY_BYTES || Buffer.byteLength(key) <= MAX_KEY_BYTES)
}
