import { fmix32, splitmix32 } from './hash.js'

/**
 * Hashes a key to a 64-bit fingerprint (two 32-bit lanes) in one pass over its characters, from which the sketch
 * derives the key's cell in every row. Only keys that are not candidates are hashed: candidates are found by
 * their string, whose hash V8 keeps.
 *
 * Results land in h1 and h2 rather than a returned pair, so hashing allocates nothing.
 */
export class KeyHasher {
  h1 = 0
  h2 = 0
  readonly #seed1: number
  readonly #seed2: number

  constructor(seed: number) {
    const [seed1, state] = splitmix32(seed | 0)
    const [seed2] = splitmix32(state)
    this.#seed1 = seed1 | 0
    this.#seed2 = seed2 | 0
  }

  /** Sets h1 and h2 to the key's fingerprint. */
  hash(key: string): void {
    // Two lanes with different multipliers, fed two UTF-16 code units (one 32-bit word) per step: half the
    // multiplications of a unit at a time; hashing is the largest part of recording a cold key with a long name.
    let h1 = this.#seed1
    let h2 = this.#seed2
    const length = key.length
    let i = 0
    for (; i + 1 < length; i += 2) {
      const word = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16)
      h1 = Math.imul(h1 ^ word, 0x01000193)
      h1 = (h1 << 15) | (h1 >>> 17)
      h2 = Math.imul(h2 ^ word, 0x9e3779b1)
      h2 = (h2 << 13) | (h2 >>> 19)
    }
    if (i < length) {
      const unit = key.charCodeAt(i)
      h1 = Math.imul(h1 ^ unit, 0x01000193)
      h2 = Math.imul(h2 ^ unit, 0x9e3779b1)
    }
    this.h1 = fmix32(h1 ^ length) | 0
    this.h2 = fmix32(h2 ^ length) | 0
  }
}
