/**
 * MurmurHash3's 32-bit finalizer: every input bit flips each output bit with probability close to 1/2. The split
 * package picks shards with it, and every agent of a fleet must pick alike: its outputs never change.
 */
export function fmix32(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** SplitMix32 step: turns one seed into a stream of well-spread 32-bit values for per-row parameters. */
export function splitmix32(state: number): [value: number, next: number] {
  const next = (state + 0x9e3779b9) | 0
  let z = next
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
  return [(z ^ (z >>> 16)) >>> 0, next]
}
