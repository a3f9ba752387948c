import { hrtime } from 'node:process'

/** One measured figure. */
export interface Measurement {
  name: string
  /** Median over batches of the time per operation. */
  nsPerOp: number
  /** 99th percentile over batches of the time per operation. */
  p99NsPerOp: number
  opsPerSec: number
  batches: number
  opsPerBatch: number
}

export interface MeasureOptions {
  /** Operations per timed batch: large enough that the timer's own cost vanishes. */
  opsPerBatch: number
  batches?: number
  /** Untimed batches first, so the JIT has settled before anything counts. */
  warmupBatches?: number
}

/**
 * Times `runBatch(ops)` repeatedly and reports per-operation time. Timing whole batches, never single calls,
 * because a clock read (~35 ns here) would be as large as the operation itself.
 */
export function measure(name: string, runBatch: (ops: number) => void, options: MeasureOptions): Measurement {
  const batches = options.batches ?? 41
  for (let i = 0; i < (options.warmupBatches ?? 5); i++) runBatch(options.opsPerBatch)
  const perOp: number[] = []
  for (let i = 0; i < batches; i++) {
    const start = hrtime.bigint()
    runBatch(options.opsPerBatch)
    perOp.push(Number(hrtime.bigint() - start) / options.opsPerBatch)
  }
  perOp.sort((a, b) => a - b)
  const median = percentile(perOp, 0.5)
  return {
    name,
    nsPerOp: median,
    p99NsPerOp: percentile(perOp, 0.99),
    opsPerSec: 1e9 / median,
    batches,
    opsPerBatch: options.opsPerBatch,
  }
}

/** The p-quantile (0..1) of an ascending array, by nearest rank. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))
  return sorted[index] as number
}

/** A median with the range it would take in 95% of reruns, by bootstrap over the samples (seeded: repeatable). */
export interface MedianInterval {
  median: number
  low: number
  high: number
}

/** The median of `samples` and its bootstrap 95% interval (2,000 resamples). */
export function medianInterval(samples: readonly number[]): MedianInterval {
  const middle = (values: number[]) =>
    percentile(
      values.sort((a, b) => a - b),
      0.5,
    )
  let seed = 0x9e3779b9
  // mulberry32: a fixed sequence, so one set of samples always prints one interval.
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const medians: number[] = []
  for (let i = 0; i < 2000; i++) {
    medians.push(middle(samples.map(() => samples[Math.floor(random() * samples.length)] as number)))
  }
  medians.sort((a, b) => a - b)
  return { median: middle([...samples]), low: percentile(medians, 0.025), high: percentile(medians, 0.975) }
}
