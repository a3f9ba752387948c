import type { Candidate } from './candidate.js'

// Slots of the fingerprint filter: with the default 256 candidates, one pending key in 64 looks a name up for
// nothing.
const SLOT_BITS = 14

/**
 * Where a recorder finds its candidates by name, in two levels, because a lookup by name that misses is dear on
 * the request. A Map miss walks the names already in the key's bucket and compares the characters of any of the
 * same length; with hundreds of candidates those names are out of cache by the next request. In a CPU profile of
 * 1.5 million GETs through the ioredis front door over 10,000 keys, the recorder's time fell from 430 ms to 150 ms
 * once cold keys no longer looked themselves up among 256 candidates on the request.
 *
 * - `onRequest` holds the keys worth finding on the request: pinned keys and candidates that turned hot (see
 *   WindowRecorder). It is empty while nothing is hot, and a lookup in an empty Map reads only the name's hash.
 * - `get` finds any candidate; a batch of deferred keys asks it only where the fingerprint filter (`mayHold`,
 *   a count of candidates per fingerprint slot) says a candidate may be, so a cold key's hash, which the batch
 *   computes to count it anyway, spares it the lookup.
 */
export class CandidateIndex {
  readonly #all = new Map<string, Candidate>()
  readonly #onRequest = new Map<string, Candidate>()
  // Candidates per slot, and a bit per slot set while its count is not 0: the batch reads only the bits (2 KB),
  // which the garbage of the requests between two batches evicts less than the counts' 32 KB. Timed around the
  // batch through the ioredis front door over 10,000 keys, a cold key cost 383-429 ns with the bits against
  // 421-493 ns reading the counts.
  readonly #counts = new Uint16Array(1 << SLOT_BITS)
  readonly #occupied = new Int32Array(1 << (SLOT_BITS - 5))

  /** Every candidate by key, for reading (the error sample's summary). */
  get all(): ReadonlyMap<string, Candidate> {
    return this.#all
  }

  get(key: string): Candidate | undefined {
    return this.#all.get(key)
  }

  /** The candidate for `key` if it is one to find on the request. */
  onRequest(key: string): Candidate | undefined {
    return this.#onRequest.get(key)
  }

  /** False when no candidate has the fingerprint h1, h2 (true may be a different key in the same slot). */
  mayHold(h1: number, h2: number): boolean {
    const slot = slotOf(h1, h2)
    return ((this.#occupied[slot >>> 5] as number) & (1 << (slot & 31))) !== 0
  }

  /** Indexes `candidate` under its key, whose fingerprint is h1, h2; `onRequest` when it is to be found there. */
  add(candidate: Candidate, h1: number, h2: number, onRequest: boolean): void {
    const slot = slotOf(h1, h2)
    candidate.slot = slot
    const count = (this.#counts[slot] as number) + 1
    this.#counts[slot] = count
    if (count === 1) this.#occupied[slot >>> 5] = (this.#occupied[slot >>> 5] as number) | (1 << (slot & 31))
    this.#all.set(candidate.key, candidate)
    candidate.onRequest = false
    if (onRequest) this.findOnRequest(candidate)
  }

  /** From now on `candidate` is found on the request too. */
  findOnRequest(candidate: Candidate): void {
    candidate.onRequest = true
    this.#onRequest.set(candidate.key, candidate)
  }

  delete(candidate: Candidate): void {
    if (this.#all.get(candidate.key) !== candidate) return
    this.#all.delete(candidate.key)
    const slot = candidate.slot
    const count = (this.#counts[slot] as number) - 1
    this.#counts[slot] = count
    if (count === 0) this.#occupied[slot >>> 5] = (this.#occupied[slot >>> 5] as number) & ~(1 << (slot & 31))
    if (candidate.onRequest) this.#onRequest.delete(candidate.key)
    candidate.onRequest = false
  }
}

// A mix of both lanes unlike the error sample's (ExactSamples), so that sampled keys share no slots.
function slotOf(h1: number, h2: number): number {
  return Math.imul(h1 ^ h2, 0x85ebca6b) >>> (32 - SLOT_BITS)
}
