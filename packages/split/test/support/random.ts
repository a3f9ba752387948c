/** A seeded generator of [0, 1) (mulberry32): the same seed gives the same operations on every run. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** An integer from 0 to n - 1. */
export function below(random: () => number, n: number): number {
  return Math.floor(random() * n)
}
