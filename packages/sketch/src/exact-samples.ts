import type { Candidate } from './candidate.js'
import type { CountMinSketch } from './count-min-sketch.js'
import { type ErrorSample, type SampledKey, summariseErrors } from './error-sample.js'
import { InvalidSketchOptionError } from './errors.js'

// Sampled keys counted exactly per window, at most: beyond this, keys first seen later in the window are not.
const MAX_SAMPLED_KEYS = 4096

/**
 * The keys a recorder counts exactly beside its sketch, to measure the sketch's error at run time: one key in
 * `sampling` (a power of two up to 65536; 0 turns sampling off), chosen by fingerprint, so that every recorder
 * with the same seed samples the same keys. A sampled key's requests are counted here while it is not a
 * candidate, and in its candidate's `sampleHits` while it is one.
 */
export class ExactSamples {
  // A key is sampled when the top bits of its lanes' mix, masked, equal match (never, with sampling off).
  readonly #mask: number
  readonly #match: number
  readonly #counts = new Map<string, number>()

  constructor(sampling: number) {
    if (
      sampling !== 0 &&
      !(Number.isInteger(sampling) && sampling >= 1 && sampling <= 65536 && (sampling & (sampling - 1)) === 0)
    ) {
      throw new InvalidSketchOptionError(
        'errorSampling',
        `must be 0 or a power of two up to 65536, got ${sampling}`,
      )
    }
    this.#mask = sampling === 0 ? 0 : sampling - 1
    this.#match = sampling === 0 ? 1 : 0
  }

  /**
   * Whether the key whose fingerprint is h1, h2 is sampled: chosen by a mix of both lanes, as the sketch's rows
   * are cut from the lanes' bits, so that the sampled keys are spread over every row like the others.
   */
  isSampled(h1: number, h2: number): boolean {
    return ((Math.imul(h1 ^ h2, 0x9e3779b1) >>> 16) & this.#mask) === this.#match
  }

  /** Counts one request of a sampled key that is not a candidate. */
  count(key: string): void {
    const count = this.#counts.get(key)
    if (count !== undefined) this.#counts.set(key, count + 1)
    else if (this.#counts.size < MAX_SAMPLED_KEYS) this.#counts.set(key, 1)
  }

  /** A sampled candidate leaving tracking hands its exact count back, as it hands its count to the sketch. */
  fold(candidate: Candidate): void {
    if (!candidate.sampled || candidate.sampleHits === 0) return
    this.#counts.set(candidate.key, (this.#counts.get(candidate.key) ?? 0) + candidate.sampleHits)
    candidate.sampleHits = 0
  }

  /** Forgets the window's counts. */
  clear(): void {
    this.#counts.clear()
  }

  /**
   * Every sampled key requested in the window: its estimate (what a report would say, from its candidate or the
   * sketch) against its exact count; undefined with sampling off.
   */
  summarise(
    candidates: ReadonlyMap<string, Candidate>,
    sketch: CountMinSketch,
    bound: number,
  ): ErrorSample | undefined {
    if (this.#match !== 0) return undefined
    const keys: SampledKey[] = []
    for (const [key, cold] of this.#counts) {
      const candidate = candidates.get(key)
      const exact = cold + (candidate?.sampleHits ?? 0)
      keys.push({ key, estimate: candidate !== undefined ? candidate.count : sketch.estimate(key), exact })
    }
    for (const candidate of candidates.values()) {
      if (candidate.sampled && candidate.sampleHits > 0 && !this.#counts.has(candidate.key)) {
        keys.push({ key: candidate.key, estimate: candidate.count, exact: candidate.sampleHits })
      }
    }
    return summariseErrors(keys, bound)
  }
}
