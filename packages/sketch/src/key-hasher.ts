import { fmix32, splitmix32 } from './hash.js'

// Keys at least this long are hashed from their UTF-8 bytes, four to a word; shorter ones a character at a time.
// A string's characters cost a representation check each through charCodeAt (ten cycles and more for the flat
// cons strings that template literals build), while TextEncoder copies the whole key in one native call of
// about 80 ns: measured on 49-character keys, 160-240 ns a key by character and 80-100 ns by bytes, with the
// two even near 20 characters.
const LONG_KEY = 24
// Keys up to this many characters fit the shared buffer whatever their characters (3 UTF-8 bytes a unit at most).
const BUFFER_CHARS = 1024

const encoder = new TextEncoder()
const sharedBytes = new Uint8Array(BUFFER_CHARS * 3 + 4)
const sharedWords = new Int32Array(sharedBytes.buffer)
// The words are read in the machine's byte order; fingerprints must not depend on it (error sampling picks the
// same keys on every agent), so a big-endian machine swaps each word's bytes first.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/**
 * Hashes a key to a 64-bit fingerprint (two 32-bit lanes) in one pass, from which the sketch derives the key's
 * cell in every row. Only keys that are not candidates are hashed: candidates are found by their string, whose
 * hash V8 keeps.
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
    if (key.length < LONG_KEY) this.#hashUnits(key)
    else this.#hashBytes(key)
  }

  // Two lanes with different multipliers, fed two UTF-16 code units (one 32-bit word) per step.
  #hashUnits(key: string): void {
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

  // The UTF-8 bytes, zero-padded to whole words; the lanes take alternate words, so each word costs one multiply
  // and the two dependency chains run side by side. The byte count joins the finalisers, so padding cannot make
  // two keys alike.
  #hashBytes(key: string): void {
    let bytes = sharedBytes
    let words = sharedWords
    if (key.length > BUFFER_CHARS) {
      words = new Int32Array(((key.length * 3) >>> 2) + 2)
      bytes = new Uint8Array(words.buffer)
    }
    const length = encoder.encodeInto(key, bytes).written
    bytes[length] = 0
    bytes[length + 1] = 0
    bytes[length + 2] = 0
    const count = (length + 3) >>> 2
    if (!LITTLE_ENDIAN) for (let w = 0; w < count; w++) words[w] = byteSwapped(words[w] as number)
    let h1 = this.#seed1
    let h2 = this.#seed2
    let i = 0
    for (; i + 1 < count; i += 2) {
      h1 = Math.imul(h1 ^ (words[i] as number), 0x01000193)
      h1 = (h1 << 15) | (h1 >>> 17)
      h2 = Math.imul(h2 ^ (words[i + 1] as number), 0x9e3779b1)
      h2 = (h2 << 13) | (h2 >>> 19)
    }
    if (i < count) h1 = Math.imul(h1 ^ (words[i] as number), 0x01000193)
    // Each lane saw half the words: the finalisers mix both into each output, so a change in any word moves both.
    this.h1 = fmix32(h1 ^ Math.imul(h2, 0x85ebca6b) ^ length) | 0
    this.h2 = fmix32(h2 ^ Math.imul(h1, 0xc2b2ae35) ^ (length << 8)) | 0
  }
}

function byteSwapped(word: number): number {
  return ((word & 0xff) << 24) | ((word & 0xff00) << 8) | ((word >>> 8) & 0xff00) | (word >>> 24)
}
