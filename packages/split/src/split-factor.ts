import { MAX_SPLIT_FACTOR } from '@heatsink/protocol'
import { InvalidSplitFactorError, InvalidSplitOptionError } from './errors.js'

/** Options of splitFactorFor. */
export interface SplitFactorOptions {
  /** Writes per second one Redis node takes for one key without becoming the bottleneck. */
  readonly perNodeWriteCapacity: number
  /** Largest factor to return; rounded down to a power of two. Default MAX_SPLIT_FACTOR (1024). */
  readonly max?: number
}

/**
 * The split factor for a key written `writesPerSecond` times a second: write rate / per-node capacity,
 * rounded up to the next power of two (so a shard can be picked by masking a hash), at least 1, capped.
 */
export function splitFactorFor(writesPerSecond: number, options: SplitFactorOptions): number {
  const { perNodeWriteCapacity } = options
  const max = options.max ?? MAX_SPLIT_FACTOR
  if (!(Number.isFinite(writesPerSecond) && writesPerSecond >= 0)) {
    throw new InvalidSplitOptionError(
      'writesPerSecond',
      `must be a finite number >= 0, received ${writesPerSecond}`,
    )
  }
  if (!(Number.isFinite(perNodeWriteCapacity) && perNodeWriteCapacity > 0)) {
    throw new InvalidSplitOptionError(
      'perNodeWriteCapacity',
      `must be a finite number > 0, received ${perNodeWriteCapacity}`,
    )
  }
  if (!(Number.isInteger(max) && max >= 1)) {
    throw new InvalidSplitOptionError('max', `must be an integer >= 1, received ${max}`)
  }
  const cap = floorPowerOfTwo(Math.min(max, MAX_SPLIT_FACTOR))
  const needed = Math.ceil(writesPerSecond / perNodeWriteCapacity)
  if (needed <= 1) return 1
  return Math.min(cap, 2 ** Math.ceil(Math.log2(needed)))
}

/** Whether `n` is a valid split factor: a power of two from 1 to MAX_SPLIT_FACTOR. */
export function isSplitFactor(n: unknown): n is number {
  return (
    typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_SPLIT_FACTOR && (n & (n - 1)) === 0
  )
}

/** Throws InvalidSplitFactorError unless `n` is a valid split factor. */
export function assertSplitFactor(n: unknown): asserts n is number {
  if (!isSplitFactor(n)) throw new InvalidSplitFactorError(n, MAX_SPLIT_FACTOR)
}

function floorPowerOfTwo(n: number): number {
  return 2 ** Math.floor(Math.log2(n))
}
