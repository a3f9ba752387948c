import type { LiveHotKey } from '@heatsink/protocol'

/** Columns the hot keys table sorts by. */
export type HotKeyColumn =
  | 'key'
  | 'mitigation'
  | 'source'
  | 'requestsPerSecond'
  | 'localCacheHitRatio'
  | 'coalesceCollapseRatio'
  | 'detectedAt'

/** Which column, which way. */
export interface SortOrder {
  column: HotKeyColumn
  descending: boolean
}

/**
 * The rows to show: those whose key contains `filter` (case-insensitive), sorted by the column; unknown values
 * (no traffic yet) sort last either way, and ties keep key order so rows do not jump between frames.
 */
export function visibleHotKeys(rows: readonly LiveHotKey[], filter: string, order: SortOrder): LiveHotKey[] {
  const needle = filter.trim().toLowerCase()
  const kept = needle === '' ? [...rows] : rows.filter((row) => row.key.toLowerCase().includes(needle))
  const sign = order.descending ? -1 : 1
  return kept.sort((a, b) => {
    const x = a[order.column]
    const y = b[order.column]
    if (x === null && y !== null) return 1
    if (y === null && x !== null) return -1
    const byColumn = x === y || x === null || y === null ? 0 : x < y ? -sign : sign
    return byColumn !== 0 ? byColumn : a.key < b.key ? -1 : a.key > b.key ? 1 : 0
  })
}
