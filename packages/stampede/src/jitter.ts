/** Default spread of every TTL this package writes: ±10%. */
export const DEFAULT_JITTER = 0.1

/**
 * A factor in [1 - jitter, 1 + jitter], uniform, by which a TTL is scaled so that keys written together do not
 * expire together. One factor scales an entry's logical and physical TTL alike, so the stale window keeps its
 * proportion.
 */
export function jitterFactor(jitter: number, random: () => number): number {
  return jitter === 0 ? 1 : 1 + jitter * (2 * random() - 1)
}
