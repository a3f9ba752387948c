import type { Candidate } from './candidate.js'

// Slots of the fingerprint filter: with the default 256 candidates, one pending key in 64 looks a name up for
// nothing.
const SLOT_BITS = 14

/**
 * Where a recorder finds its candidates by name, in two levels, because a lookup by name that misses is dear on
 * the request. A Map miss walks the names already in the key's bucket and compares the characters of any of the
 * same length; with hundreds of candidates those names are out of cache by the next request, and through the
 * ioredis front door over 10,000 cold keys that one lookup cost more than hashing and counting the key together.
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
  readonly #slots = new Uint16Array(1 << SLOT_BITS)

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
    return this.#slots[slotOf(h1, h2)] !== 0
  }

  /** Indexes `candidate` under its key, whose fingerprint is h1, h2; `onRequest` when it is to be found there. */
  add(candidate: Candidate, h1: number, h2: number, onRequest: boolean): void {
    const slot = slotOf(h1, h2)
    candidate.slot = slot
    ;(this.#slots[slot] as number)++
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
    ;(this.#slots[candidate.slot] as number)--
    if (candidate.onRequest) this.#onRequest.delete(candidate.key)
    candidate.onRequest = false
  }
}

// A mix of both lanes unlike the error sample's (ExactSamples), so that sampled keys share no slots.
function slotOf(h1: number, h2: number): number {
  return Math.imul(h1 ^ h2, 0x85ebca6b) >>> (32 - SLOT_BITS)
}
