/** A source of uniform doubles in [0, 1); Math.random fits, and so does a seeded generator. */
export type Random = () => number

/**
 * A seeded generator (sfc32), so that a workload, and every test or benchmark built on it, replays exactly.
 * sfc32 passes PractRand to 2^40+ bytes and costs a few nanoseconds, which matters inside benchmarks.
 */
export function seededRandom(seed: number): Random {
  let a = 0x9e3779b9
  let b = 0x243f6a88
  let c = 0xb7e15162
  let d = seed | 0
  const next = (): number => {
    a |= 0
    b |= 0
    c |= 0
    d |= 0
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  // The first outputs of sfc32 still echo the seed; discard them.
  for (let i = 0; i < 15; i++) next()
  return next
}
