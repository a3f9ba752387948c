import type { LiveHotKey } from '@heatsink/protocol'
import { useState } from 'preact/hooks'
import { duration, percent, rate, times } from '../format.js'
import { type HotKeyColumn, type SortOrder, visibleHotKeys } from '../sorting.js'
import { keyHref } from './routes.js'

const COLUMNS: Array<{ column: HotKeyColumn | null; label: string; numeric?: boolean }> = [
  { column: 'key', label: 'Key' },
  { column: 'mitigation', label: 'Mitigation' },
  { column: null, label: 'Split', numeric: true },
  { column: 'source', label: 'Source' },
  { column: 'requestsPerSecond', label: 'Req/s', numeric: true },
  { column: 'localCacheHitRatio', label: 'L1 hit', numeric: true },
  { column: 'coalesceCollapseRatio', label: 'Collapse', numeric: true },
  { column: null, label: 'Redis reads/s before → after', numeric: true },
  { column: 'detectedAt', label: 'Promoted', numeric: true },
]

/** The registry now: sortable by clicking a heading, filtered by key text. */
export function HotKeysTable({ hotkeys, now }: { hotkeys: LiveHotKey[]; now: number }) {
  const [filter, setFilter] = useState('')
  const [order, setOrder] = useState<SortOrder>({ column: 'requestsPerSecond', descending: true })
  const rows = visibleHotKeys(hotkeys, filter, order)
  const sortBy = (column: HotKeyColumn) =>
    setOrder((current) => ({
      column,
      descending: current.column === column ? !current.descending : column !== 'key',
    }))

  return (
    <section>
      <header class="section-head">
        <h2>Hot keys ({hotkeys.length})</h2>
        <input
          type="search"
          placeholder="Filter by key"
          aria-label="Filter hot keys by key"
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
      </header>
      <div class="scroll">
        <table class="hotkeys" data-testid="hotkeys">
          <thead>
            <tr>
              {COLUMNS.map(({ column, label, numeric }) => (
                <th
                  key={label}
                  class={numeric === true ? 'num' : ''}
                  aria-sort={
                    column === order.column ? (order.descending ? 'descending' : 'ascending') : undefined
                  }
                >
                  {column === null ? (
                    label
                  ) : (
                    <button type="button" onClick={() => sortBy(column)}>
                      {label}
                      {column === order.column ? (order.descending ? ' ▼' : ' ▲') : ''}
                    </button>
                  )}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 ? (
              <tr>
                <td colSpan={COLUMNS.length} class="empty">
                  {hotkeys.length === 0 ? 'No key is hot right now.' : 'No hot key matches the filter.'}
                </td>
              </tr>
            ) : (
              rows.map((row) => (
                <tr key={row.key} data-key={row.key}>
                  <td class="key">
                    <a href={keyHref(row.key)}>{row.key}</a>
                  </td>
                  <td>{row.mitigation}</td>
                  <td class="num">{row.mitigation === 'split' ? row.splitFactor : '–'}</td>
                  <td>{row.source}</td>
                  <td class="num">{rate(row.requestsPerSecond)}</td>
                  <td class="num">{percent(row.localCacheHitRatio)}</td>
                  <td class="num">{times(row.coalesceCollapseRatio)}</td>
                  <td class="num">
                    {rate(row.redisReadsBefore)} → {rate(row.redisReadsAfter)}
                  </td>
                  <td class="num">{duration(Math.max(0, now - row.detectedAt))} ago</td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </section>
  )
}
