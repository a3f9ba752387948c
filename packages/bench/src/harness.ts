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
