import { z } from 'zod'
import { Count, RedisKey } from './fields.js'

/** Most keys one report names with aborted transactions; an agent sends its busiest. */
export const MAX_WATCH_ABORT_KEYS = 1000

/**
 * A report's `watchAborts`: [key, transactions] for each key WATCHed by transactions whose EXEC answered nil (another
 * client wrote a watched key first) in the window. A transaction watching several keys counts once for each.
 * An additive field of WindowReport, outside its schema's checks: an aggregator older than it ignores it, and a
 * malformed one is set aside (and counted) without losing the rest of the report.
 */
export const WatchAborts = z
  .array(z.tuple([RedisKey, Count]))
  .max(MAX_WATCH_ABORT_KEYS)
  .describe('[key, transactions aborted by WATCH] in the window')
export type WatchAborts = z.infer<typeof WatchAborts>

/** The report's watchAborts: [] when absent, 'malformed' when present and not valid. */
export function readWatchAborts(report: { watchAborts?: unknown }): WatchAborts | 'malformed' {
  if (report.watchAborts === undefined) return []
  const parsed = WatchAborts.safeParse(report.watchAborts)
  return parsed.success ? parsed.data : 'malformed'
}
