// How numbers and times read on the page.

/** Requests per second, rounded, with thousands separators; `–` when unknown. */
export function rate(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : Math.round(value).toLocaleString('en')
}

/** A ratio as a percentage; `–` when unknown. */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${(value * 100).toFixed(1)}%`
}

/** A collapse ratio such as `12.5x`; `–` when unknown. */
export function times(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${value.toFixed(1)}x`
}

/** A duration as `850 ms`, `12 s`, `4 min` or `3 h`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 120_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`
  return `${Math.round(ms / 3_600_000)} h`
}

/** A wall-clock time, `14:03:07`. */
export function clock(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString('en-GB', { hour12: false })
}

/** Bytes as `512 B`, `3.2 MB` or `1.5 GB`; `–` when unknown. */
export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–'
  if (value < 1024) return `${Math.round(value)} B`
  if (value < 1024 ** 2) return `${(value / 1024).toFixed(1)} kB`
  if (value < 1024 ** 3) return `${(value / 1024 ** 2).toFixed(1)} MB`
  return `${(value / 1024 ** 3).toFixed(2)} GB`
}
