import type { Random } from './random.js'

/**
 * Samples ranks 0..n-1 with P(rank i) proportional to 1 / (i + 1)^s: the power law real cache traffic follows.
 * The cumulative distribution is built once, so a draw is one binary search (about 17 steps for 100,000 keys).
 */
export class ZipfSampler {
  readonly n: number
  readonly s: number
  readonly #cdf: Float64Array
  readonly #random: Random

  constructor(n: number, s: number, random: Random) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`n must be a positive integer, got ${n}`)
    if (!(s > 0)) throw new RangeError(`s must be positive, got ${s}`)
    this.n = n
    this.s = s
    this.#random = random
    this.#cdf = new Float64Array(n)
    let sum = 0
    for (let i = 0; i < n; i++) {
      sum += 1 / (i + 1) ** s
      this.#cdf[i] = sum
    }
    for (let i = 0; i < n; i++) this.#cdf[i] = (this.#cdf[i] as number) / sum
  }

  /** The probability of rank i, for computing expected counts. */
  probability(rank: number): number {
    const hi = this.#cdf[rank] ?? 0
    const lo = rank === 0 ? 0 : (this.#cdf[rank - 1] ?? 0)
    return hi - lo
  }

  /** Draws one rank. */
  next(): number {
    const u = this.#random()
    const cdf = this.#cdf
    let lo = 0
    let hi = this.n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((cdf[mid] as number) < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}
