// How values read in the CLI's tables and lines.

/** Requests per second, rounded, with separators; `-` when unknown. */
export function rate(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : Math.round(value).toLocaleString('en')
}

/** A ratio as a percentage; `-` when unknown. */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : `${(value * 100).toFixed(1)}%`
}

/** A collapse ratio such as `12.5x`; `-` when unknown. */
export function times(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : `${value.toFixed(1)}x`
}

/** A duration as `850ms`, `12.0s` or `4m`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)}s`
  return `${Math.round(ms / 60_000)}m`
}

/** An ISO-8601 time without milliseconds, UTC. */
export function timestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** Bytes as `512B`, `3.2MB` or `1.50GB`; `-` when unknown. */
export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return '-'
  const units = ['B', 'kB', 'MB', 'GB']
  let scaled = value
  let unit = 0
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024
    unit++
  }
  return `${unit === 0 ? Math.round(scaled) : scaled.toFixed(1)}${units[unit]}`
}
