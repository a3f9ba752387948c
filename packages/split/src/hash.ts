import { fmix32 } from '@heatsink/sketch'

/**
 * A well-mixed 32-bit hash of a string: FNV-1a over its UTF-16 code units, finished with MurmurHash3's fmix32
 * (the sketch's, one copy for the repository) so that the low bits (the ones a power-of-two mask keeps) depend
 * on every character. It picks the shard of a member or routing id, which every agent of a fleet must agree on:
 * its outputs are pinned by test/hash.test.ts and must never change.
 */
export function mix32(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return fmix32(hash)
}

/** The shard of `n` (a power of two) that a member, or a routing id, always maps to. */
export function hashShard(text: string, n: number): number {
  return mix32(text) & (n - 1)
}

/** A shard of `n` drawn from `random` (a function returning [0, 1)). */
export function randomShard(random: () => number, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n))
}
