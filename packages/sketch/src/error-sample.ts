/** One sampled key at a window's end: the estimate the recorder reported beside its exact count. */
export interface SampledKey {
  key: string
  estimate: number
  exact: number
}

/**
 * The sketch's error measured at run time, so that operators see how far its estimates are from the truth on
 * their own traffic rather than trusting the bound: a fixed share of keys, chosen by their fingerprint so every agent samples
 * the same ones, is counted exactly beside the sketch, and compared with the estimate when the window closes.
 */
export interface ErrorSample {
  /** Sampled keys requested in the window. */
  sampled: number
  /** Mean and largest of (estimate - exact) / exact over them. */
  meanRelativeError: number
  maxRelativeError: number
  /** The promised bound on any overcount, (e / width) x requests in the window. */
  bound: number
  /** Sampled keys whose overcount exceeded the bound (the sketch promises this for a share below e^-depth). */
  overBound: number
  keys: SampledKey[]
}

/** Summarises sampled keys' estimates against their exact counts. */
export function summariseErrors(keys: SampledKey[], bound: number): ErrorSample {
  let sum = 0
  let max = 0
  let overBound = 0
  for (const { estimate, exact } of keys) {
    const relative = (estimate - exact) / exact
    sum += relative
    if (relative > max) max = relative
    if (estimate - exact > bound) overBound++
  }
  return {
    sampled: keys.length,
    meanRelativeError: keys.length === 0 ? 0 : sum / keys.length,
    maxRelativeError: max,
    bound,
    overBound,
    keys,
  }
}
