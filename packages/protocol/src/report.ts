import { z } from 'zod'
import { AgentId, Count, EpochMs, PositiveInt, RedisKey } from './fields.js'
import { MAX_SPLIT_FACTOR } from './mitigation.js'
import { WIRE_VERSION } from './version.js'

/** Most candidates one report may carry; bounds the aggregator's work per stream entry. */
export const MAX_CANDIDATES = 10_000
/** A set of command forms as a bitmask (a 31-bit non-negative integer). */
const FormMask = z.int().min(0).max(0x7fffffff)

/** Most hot-key stats one report may carry. */
export const MAX_HOT_KEY_STATS = 10_000

/**
 * A key the agent's sketch saw often in the window. `count` is the sketch's estimate of all requests for
 * the key; `reads` and `writes` are exact but start only once the key became a candidate, so their sum
 * may be less than `count`. `misses` counts reads that found nothing in Redis (or went to a loader), so the
 * aggregator can tell a key whose misses are what is hot.
 *
 * Counts are cumulative for the window: a partial report and the window's final report both give the
 * counts from the window's start, so the aggregator keeps the largest it has seen per agent and key, and a
 * report processed twice, or out of order, changes nothing.
 *
 * On the wire an entry is an object or, as agents send it, the tuple [key, count, reads, writes, misses?]:
 * half the bytes, and reports are what an agent sends most (each agent reports every key of the fleet's hot
 * set it sees, every window). Decoding turns both into the object.
 */
const CandidateObject = z.object({
  key: RedisKey,
  count: Count,
  reads: Count,
  writes: Count,
  misses: Count.default(0),
})
// The tuple is renamed into the object before validation, so an error names the field in either form.
export const CandidateEntry = z.preprocess(
  (entry) =>
    Array.isArray(entry) && (entry.length === 4 || entry.length === 5)
      ? { key: entry[0], count: entry[1], reads: entry[2], writes: entry[3], misses: entry[4] ?? 0 }
      : entry,
  CandidateObject,
)
/** A candidate as an agent writes it: the compact tuple; misses left out when there were none. */
export type CompactCandidate =
  | [key: string, count: number, reads: number, writes: number]
  | [key: string, count: number, reads: number, writes: number, misses: number]

/** The compact wire form of a candidate. */
export function compactCandidate(
  key: string,
  count: number,
  reads: number,
  writes: number,
  misses: number,
): CompactCandidate {
  return misses === 0 ? [key, count, reads, writes] : [key, count, reads, writes, misses]
}
export type CandidateEntry = z.infer<typeof CandidateEntry>

/** How an agent's mitigation of one registered hot key behaved in the window; absent counters mean 0. */
export const HotKeyStats = z.object({
  key: RedisKey,
  l1Hits: Count.default(0),
  l1Misses: Count.default(0),
  /**
   * L1's reads of the key at Redis (fills): a miss that joined a fill in flight is not one, so l1Misses - l1Fills
   * misses were absorbed too. Absent: none (or an agent from before the field).
   */
  l1Fills: Count.optional(),
  coalescedWaiters: Count.default(0),
  upstreamLoads: Count.default(0),
  staleServes: Count.default(0),
  leaseWaits: Count.default(0),
  timeouts: Count.default(0),
  /** Reads of the key that found nothing in Redis. */
  misses: Count.default(0),
  /** Requests per split copy, indexed by copy; present only for split keys. */
  splitShardCounts: z.array(Count).max(MAX_SPLIT_FACTOR).optional(),
})
export type HotKeyStats = z.infer<typeof HotKeyStats>

/** Most sampled keys a report names individually. */
export const MAX_SKETCH_SAMPLES = 256

/**
 * The sketch's error in one agent's window, measured on the keys it samples (one in N, chosen by fingerprint, so
 * every agent samples the same keys): each counted exactly beside the sketch and compared with its estimate.
 */
export const SketchError = z.object({
  sampled: Count,
  /** Mean and largest (estimate - exact) / exact over the sampled keys. */
  meanRelativeError: z.number().min(0),
  maxRelativeError: z.number().min(0),
  /** The sketch's promised bound on an overcount in the window, (e / width) x requests. */
  bound: z.number().min(0),
  /** Sampled keys overcounted by more than the bound. */
  overBound: Count,
  /** [key, estimate, exact] for the sampled keys among the report's candidates and the registered keys. */
  keys: z
    .array(z.tuple([RedisKey, Count, PositiveInt]))
    .max(MAX_SKETCH_SAMPLES)
    .default([]),
})
export type SketchError = z.infer<typeof SketchError>

/** One agent's per-window report, appended to a report stream. */
export const WindowReport = z
  .object({
    v: z.literal(WIRE_VERSION),
    kind: z.literal('report'),
    agentId: AgentId,
    /** Per agent, increasing by report; gaps show reports lost between agent and aggregator. */
    seq: Count,
    windowStart: EpochMs,
    windowMs: PositiveInt,
    /** Requests the agent recorded in the window, candidate or not. */
    total: Count,
    /** Reports this agent dropped (not delivered) since its last delivered one. */
    dropped: Count,
    /**
     * The registry version the agent held when it sent the report, so operators see agents that lag behind the
     * registry. Optional: agents older than this field leave it out, and it needs no new wire version.
     */
    registryVersion: Count.optional(),
    /**
     * Sent before the window closed, because a key crossed the agent's fast-report floor: counts so far.
     * The window's final report follows with partial false.
     */
    partial: z.boolean().default(false),
    candidates: z.array(CandidateEntry).max(MAX_CANDIDATES),
    /**
     * The command forms the agent saw on each candidate while it tracked it, `forms[i]` for `candidates[i]`: a
     * bitmask of @heatsink/commands' CommandForm families (0: none seen while tracked). The control plane splits a
     * key automatically only when all its forms are one split kind's. Optional and additive, no new wire version:
     * a report without it (an older agent) counts as having seen forms no split answers; bits an aggregator does
     * not know count the same.
     */
    forms: z.array(FormMask).max(MAX_CANDIDATES).optional(),
    /**
     * In partial reports: [key, requests per second] for keys past the fast-report floor, measured by the agent over
     * the last tenth of a second or more (the fast path judges a surge by its rate, not by the counts a window has
     * had time to gather). Optional and additive: no new wire version.
     */
    rates: z
      .array(z.tuple([RedisKey, Count]))
      .max(MAX_CANDIDATES)
      .optional(),
    /** In final reports, with the agent's error sampling on: the sketch's error measured against exact counts. */
    sketchError: SketchError.optional(),
    hotKeyStats: z.array(HotKeyStats).max(MAX_HOT_KEY_STATS).default([]),
    /**
     * In final reports: transactions aborted by WATCH per key (see watch-aborts.ts). Checked apart from the rest
     * (readWatchAborts), so that a malformed one is set aside alone rather than dead-lettering the report.
     */
    watchAborts: z.unknown().optional(),
  })
  .refine((report) => report.forms === undefined || report.forms.length === report.candidates.length, {
    message: 'forms must have one entry per candidate',
    path: ['forms'],
  })
/** A decoded report: defaults filled in. */
export type WindowReport = z.infer<typeof WindowReport>
/** A report as an agent may write it: counters that default may be left out. */
export type WindowReportInput = z.input<typeof WindowReport>
