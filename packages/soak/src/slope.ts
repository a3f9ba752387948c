/** One measurement of a process's memory. */
export interface MemorySample {
  /** Seconds since the soak started. */
  readonly atSeconds: number
  readonly rssBytes: number
  /** V8's used heap; null where the process does not say (a non-Node process, or a scrape that failed). */
  readonly heapBytes: number | null
}

/** Least-squares slope of `value` over time, in MB per minute; null with fewer than three points. */
export function slopeMbPerMinute(
  samples: readonly MemorySample[],
  value: (sample: MemorySample) => number | null,
): number | null {
  const points = samples.flatMap((sample) => {
    const y = value(sample)
    return y === null ? [] : [{ x: sample.atSeconds / 60, y: y / 1024 / 1024 }]
  })
  if (points.length < 3) return null
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / points.length
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / points.length
  let covariance = 0
  let variance = 0
  for (const p of points) {
    covariance += (p.x - meanX) * (p.y - meanY)
    variance += (p.x - meanX) ** 2
  }
  return variance === 0 ? null : covariance / variance
}
