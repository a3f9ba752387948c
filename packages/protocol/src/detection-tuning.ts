import { z } from 'zod'
import { Count, EpochMs, PositiveInt, RedisKey } from './fields.js'
import { WIRE_VERSION } from './version.js'

/** Most keys one tuning message may ask agents to watch; bounds what a (forged) message can make them report. */
export const MAX_WATCHED_KEYS = 1000

/**
 * What the control plane tells agents about reporting, so that a key hot cluster-wide is found however thinly
 * it is spread over the fleet (published on `names.tuningChannel`, the latest kept at `names.tuningKey`).
 *
 * - `reportFloor`: report every key whose count in a window reaches this, whatever its rank. It is the hot
 *   threshold per window divided by the agents reporting: a key whose cluster-wide count reaches the threshold
 *   must reach threshold / agents on at least one of them, so it is reported by at least one agent.
 * - `watch`: keys whose reported sum may still reach the threshold once the agents that did not report them
 *   are counted. Agents pin them (count them exactly and report them whenever requested) for `watchWindows`
 *   windows after the message, so their sum becomes exact.
 *
 * Several replicas may publish; agents take the union of the watched keys and the latest floor.
 */
export const DetectionTuning = z.object({
  v: z.literal(WIRE_VERSION),
  kind: z.literal('tuning'),
  /** When the aggregator issued it, on its clock. */
  at: EpochMs,
  /** Agents the control plane heard from recently, the divisor of the floor. */
  activeAgents: Count,
  reportFloor: PositiveInt,
  watch: z.array(RedisKey).max(MAX_WATCHED_KEYS),
  watchWindows: PositiveInt.max(3600),
  /** HMAC over the rest of the message with the registry key (registry-mac.ts); checked by agents that have it. */
  mac: z.string().optional(),
})
export type DetectionTuning = z.infer<typeof DetectionTuning>
