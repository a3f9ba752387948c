/** One measurement of a process's memory. */
export interface MemorySample {
  /** Seconds since the soak started. */
  readonly atSeconds: number
  readonly rssBytes: number
  /** V8's used heap; null where the process does not say (a non-Node process, or a scrape that failed). */
  readonly heapBytes: number | null
}

/** Whether a minute is summed up by its highest or its lowest sample. */
export type Pick = 'peak' | 'floor'

/**
 * Growth in MB per minute: the least-squares slope through one point per minute, that minute's peak or floor.
 * Raw samples swing with every collection and with V8 handing pages back to the system (an agent's RSS fell
 * from 111 to 82 MB and was back at 110 a minute later, which a line through the raw samples read as
 * +9 MB/min); a leak shows as peaks that keep rising (RSS) and a floor after collections that keeps rising
 * (heap). Null with fewer than three minutes.
 */
export function slopeMbPerMinute(
  samples: readonly MemorySample[],
  value: (sample: MemorySample) => number | null,
  pick: Pick,
): number | null {
  const minutes = new Map<number, { bytes: number; samples: number }>()
  for (const sample of samples) {
    const bytes = value(sample)
    if (bytes === null) continue
    const minute = Math.floor(sample.atSeconds / 60)
    const kept = minutes.get(minute)
    if (kept === undefined) minutes.set(minute, { bytes, samples: 1 })
    else {
      kept.samples++
      if (pick === 'peak' ? bytes > kept.bytes : bytes < kept.bytes) kept.bytes = bytes
    }
  }
  // A minute cut short (the first after warm-up, the last) has seen less of the sawtooth: its peak is lower and
  // its floor higher than a full minute's would be, so minutes with under half the usual samples are left out.
  const usual = Math.max(0, ...[...minutes.values()].map((m) => m.samples))
  const points = [...minutes]
    .filter(([, m]) => m.samples * 2 >= usual)
    .map(([minute, m]) => ({ x: minute, y: m.bytes / 1024 / 1024 }))
  if (points.length < 3) return null
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / points.length
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / points.length
  let covariance = 0
  let variance = 0
  for (const p of points) {
    covariance += (p.x - meanX) * (p.y - meanY)
    variance += (p.x - meanX) ** 2
  }
  return covariance / variance
}
