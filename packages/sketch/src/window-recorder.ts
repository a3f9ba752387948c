// Longer than 300 lines: record() runs on every command an agent sees; the sketch, the candidate heap and the
// admission rule share this class's fields so that a record is one call with no indirection. The parts that need
// no such sharing are files of their own (count-min-sketch.ts, candidate-heap.ts, candidate-index.ts, candidate.ts,
// key-hasher.ts).
import { Candidate } from './candidate.js'
import { CandidateHeap } from './candidate-heap.js'
import { CandidateIndex } from './candidate-index.js'
import { CountMinSketch, type CountMinSketchOptions } from './count-min-sketch.js'
import type { ErrorSample } from './error-sample.js'
import { InvalidSketchOptionError } from './errors.js'
import { ExactSamples } from './exact-samples.js'
import { KeyHasher } from './key-hasher.js'

/** How a window recorder sizes its sketch and decides what to report. */
export interface WindowRecorderOptions extends CountMinSketchOptions {
  /** Keys reported every window whatever their count, so the aggregator can sum keys that are warm everywhere. */
  topK?: number
  /** Keys tracked as candidates; more than topK so that keys near the cut keep exact counts. */
  capacity?: number
  /**
   * A key whose count in one window reaches this is always reported, even beyond topK. The control plane lowers
   * it as the fleet grows (setReportFloor), so that a key hot cluster-wide is reported by at least one agent.
   */
  reportFloor?: number
  /** The count at which onFloorCrossed fires (the fast path); default reportFloor. Not changed by setReportFloor. */
  fastFloor?: number
  /** Hard limit on tracked keys when more than `capacity` keys reach the report floor in one window. */
  maxCandidates?: number
  /** Called once per key per window, on the request that takes it to the fast floor: a fast path. */
  onFloorCrossed?: (key: string, count: number) => void
  /** Start of the first window (epoch ms); later windows start where the previous one was rolled over. */
  windowStart?: number
  /**
   * Count keys that are not hot in batches, after the current turn of the event loop, instead of on the request:
   * their record() then costs an array push and answers 0. Hot keys are pinned keys and candidates counted
   * HOT_MIN times in their window (more on a busy recorder, see #hotAfter); a candidate stays hot while tracked.
   * Every reading method counts what is pending first, so counts are the same; what differs is record()'s answer
   * (0 until a key is hot, so a caller watches only hot keys' replies: reported misses scale the watched reads'
   * misses up to all reads) and the moment a key crosses the report floor. Default false.
   */
  deferColdKeys?: boolean
  /**
   * Measure the sketch's error at run time: one key in `errorSampling` (a power of two up to 65536; 0, the
   * default, turns it off), chosen by fingerprint so every recorder with the same seed samples the same keys, is
   * counted exactly as well, and each summary carries the sampled keys' estimates against their exact counts.
   */
  errorSampling?: number
}

// Deferred cold keys are counted at once past this many, so a long synchronous loop cannot grow the batch.
const MAX_PENDING = 8192
// With deferColdKeys, a candidate turns hot once counted this many times in its window, or as many times as the
// last window's average sketch cell (total / width) when that is more: below it a count is the sketch's noise
// level, and a recorder whose hundreds of candidates were all hot would look each deferred key up on the
// request again (CandidateIndex).
const HOT_MIN = 8

/** One key's counts in a closed window. */
export interface HeavyHitter {
  key: string
  /** Estimated requests: never below the truth, exact for keys tracked since the window opened. */
  count: number
  /** Reads and writes counted exactly while tracked; their sum is below count when tracking began late. */
  reads: number
  writes: number
  /** Reads that found nothing (recordMiss), counted exactly while tracked. */
  misses: number
  /** The command forms recorded while tracked (recordForms), OR-ed; 0 when none were. */
  forms: number
}

/** What a window reports when it closes. */
export interface WindowSummary {
  windowStart: number
  windowMs: number
  /** Requests recorded in the window. */
  total: number
  /** Top keys by count, then every further key at or above the report floor; highest first. */
  hitters: HeavyHitter[]
  /** Admissions refused because maxCandidates keys had all reached the report floor. */
  overflowed: number
  /** With errorSampling: the sampled keys' estimates against their exact counts. */
  errorSample?: ErrorSample
}

export const DEFAULT_TOP_K = 32
export const DEFAULT_REPORT_FLOOR = 100

/**
 * The per-process frequency engine: a Count-Min Sketch for the current window plus the heavy-hitter candidates
 * a sketch cannot list by itself. Recording reads no clock; windows close when rollover() is called by a timer
 * (TumblingWindows) or by a test with an explicit time.
 *
 * The candidates sit in front of the sketch (the Augmented Sketch of Roy et al., SIGMOD 2016): a candidate is
 * counted exactly and no longer feeds the sketch, and when evicted it folds its exact count back in. Heavy keys
 * therefore stop inflating the cells they share with cold keys, so a cold key cannot read as hot because it met
 * a different heavy key in every row; and the hottest keys, most of the traffic, never touch the sketch.
 * Invariant: for every key, its candidate count (or else its sketch estimate) is at least its true count.
 */
export class WindowRecorder {
  readonly sketch: CountMinSketch
  readonly topK: number
  readonly capacity: number
  readonly maxCandidates: number
  readonly fastFloor: number
  #reportFloor: number
  readonly #onFloorCrossed: ((key: string, count: number) => void) | undefined
  readonly #hasher: KeyHasher
  readonly #index = new CandidateIndex()
  readonly #heap = new CandidateHeap()
  // Pinned keys: counted exactly, never evicted, reported whenever seen (pin()). Outside the heap, so eviction
  // cannot reach them.
  readonly #pinned = new Map<string, Candidate>()
  readonly #widthBits: number
  readonly #deferCold: boolean
  // The batch, in buffers allocated once: a growing array per batch would be garbage on the request path.
  readonly #pendingKeys: string[] = []
  readonly #pendingWrites = new Uint8Array(MAX_PENDING)
  readonly #pendingForms = new Uint16Array(MAX_PENDING)
  #pending = 0
  // The count at which a deferred candidate turns hot this window (HOT_MIN).
  #hotAfter = HOT_MIN
  readonly #samples: ExactSamples
  #windowStart: number
  #total = 0
  #overflowed = 0

  constructor(options: WindowRecorderOptions = {}) {
    this.sketch = new CountMinSketch(options)
    this.topK = positiveInteger('topK', options.topK ?? DEFAULT_TOP_K)
    this.capacity = positiveInteger('capacity', options.capacity ?? Math.max(256, 4 * this.topK))
    this.#reportFloor = positiveInteger('reportFloor', options.reportFloor ?? DEFAULT_REPORT_FLOOR)
    this.fastFloor = positiveInteger('fastFloor', options.fastFloor ?? this.#reportFloor)
    this.maxCandidates = positiveInteger('maxCandidates', options.maxCandidates ?? 16 * this.capacity)
    if (this.capacity < this.topK) throw new InvalidSketchOptionError('capacity', 'must be at least topK')
    if (this.maxCandidates < this.capacity) {
      throw new InvalidSketchOptionError('maxCandidates', 'must be at least capacity')
    }
    this.#onFloorCrossed = options.onFloorCrossed
    this.#deferCold = options.deferColdKeys ?? false
    this.#windowStart = options.windowStart ?? 0
    this.#widthBits = Math.log2(this.sketch.width)
    this.#hasher = new KeyHasher(this.sketch.seed)
    this.#samples = new ExactSamples(options.errorSampling ?? 0)
  }

  /** The count at which a key is reported whatever its rank. */
  get reportFloor(): number {
    return this.#reportFloor
  }

  /** Changes the report floor from now on (keys already past the new floor are reported at rollover). */
  setReportFloor(floor: number): void {
    this.#reportFloor = positiveInteger('reportFloor', floor)
  }

  /**
   * Pins exactly these keys: each is counted exactly from now on (a key not tracked yet starts from its sketch
   * estimate, an upper bound), is never evicted, and is reported in every window in which it was requested,
   * however low its count. The control plane pins the keys whose cluster-wide sum needs every agent's count:
   * registered keys and keys it is watching. A key unpinned goes back to the sketch with its count.
   */
  pin(keys: Iterable<string>): void {
    this.#drain()
    const wanted = new Set(keys)
    for (const [key, candidate] of this.#pinned) {
      if (wanted.has(key)) continue
      this.#pinned.delete(key)
      this.#index.delete(candidate)
      candidate.pinned = false
      this.sketch.addAtCells(candidate.cells, candidate.count - candidate.prior)
      this.#samples.fold(candidate)
    }
    for (const key of wanted) {
      if (this.#pinned.has(key)) continue
      let candidate = this.#index.get(key)
      if (candidate !== undefined) {
        this.#heap.remove(candidate)
        this.#index.findOnRequest(candidate)
      } else {
        candidate = new Candidate(key, this.sketch.depth)
        this.#hasher.hash(key)
        const { h1, h2 } = this.#hasher
        candidate.sampled = this.#samples.isSampled(h1, h2)
        this.sketch.cellsAt(h1, h2, candidate.cells)
        const estimate = this.sketch.estimateAtCells(candidate.cells)
        candidate.count = estimate
        candidate.prior = estimate
        this.#index.add(candidate, h1, h2, true)
      }
      candidate.pinned = true
      this.#pinned.set(key, candidate)
    }
  }

  /**
   * The candidate that counts pinned `key`, or undefined when the key is not pinned. A caller that keeps it may
   * count the key through recordPinned() while its `pinned` stays true, with no lookup by name.
   */
  pinnedCandidate(key: string): Candidate | undefined {
    return this.#pinned.get(key)
  }

  /** As record() for the key a pinned candidate counts (see pinnedCandidate; check `pinned` first). */
  recordPinned(candidate: Candidate, write: boolean, forms: number): number {
    this.#total++
    candidate.forms |= forms
    return this.#countCandidate(candidate, candidate.key, write)
  }

  /** Start of the open window (epoch ms). */
  get windowStart(): number {
    return this.#windowStart
  }

  /**
   * Counts one request for `key`; `write` tells writes from reads. Returns how many requests of this kind (reads
   * or writes) the key has had since it became a candidate, this one included, or 0 when it is not tracked (with
   * deferColdKeys: not hot). Only a tracked key's recordMiss counts, so a caller can skip watching an untracked
   * key's reply, and can watch a busy key's replies ever more sparsely as the count grows. `forms` (a
   * caller-defined bitmask below 65536, the agent's command forms) is OR-ed into a tracked key's forms for the
   * window; a key not tracked yet keeps none, so cold keys cost nothing more.
   */
  record(key: string, write = false, forms = 0): number {
    this.#total++
    const candidate = this.#deferCold ? this.#index.onRequest(key) : this.#index.get(key)
    if (candidate !== undefined) {
      candidate.forms |= forms
      return this.#countCandidate(candidate, key, write)
    }
    if (!this.#deferCold) return this.#recordCold(key, write)
    // Measured through the ioredis front door, 1,000 concurrent GETs over 100,000 cold keys: the sketch work
    // done in one batch while the replies are on their way cost a third of what it cost on each request.
    const at = this.#pending++
    this.#pendingKeys[at] = key
    this.#pendingWrites[at] = write ? 1 : 0
    this.#pendingForms[at] = forms
    if (at === 0) setImmediate(this.#drain)
    else if (at + 1 >= MAX_PENDING) this.#drain()
    return 0
  }

  readonly #drain = (): void => {
    const count = this.#pending
    if (count === 0) return
    this.#pending = 0
    const keys = this.#pendingKeys
    const writes = this.#pendingWrites
    const forms = this.#pendingForms
    const hasher = this.#hasher
    const index = this.#index
    for (let i = 0; i < count; i++) {
      const key = keys[i] as string
      const write = writes[i] === 1
      // The hash counts a cold key in the sketch; first it tells most cold keys from candidates with no lookup.
      hasher.hash(key)
      const candidate = index.mayHold(hasher.h1, hasher.h2) ? index.get(key) : undefined
      if (candidate !== undefined) this.#countDeferred(candidate, key, write, forms[i] as number)
      else this.#recordHashed(key, write)
    }
  }

  // A candidate that was not hot when requested: its reply went unwatched.
  #countDeferred(candidate: Candidate, key: string, write: boolean, forms: number): void {
    candidate.forms |= forms
    if (!write) candidate.unwatchedReads++
    this.#countCandidate(candidate, key, write)
    if (!candidate.onRequest && candidate.count - candidate.prior >= this.#hotAfter) {
      this.#index.findOnRequest(candidate)
    }
  }

  #countCandidate(candidate: Candidate, key: string, write: boolean): number {
    const count = ++candidate.count
    if (candidate.sampled) candidate.sampleHits++
    if (count === this.fastFloor) this.#onFloorCrossed?.(key, count)
    return write ? ++candidate.writes : ++candidate.reads
  }

  // A key that is not a candidate: into the sketch, and admitted when its estimate earns a place.
  #recordCold(key: string, write: boolean): number {
    this.#hasher.hash(key)
    return this.#recordHashed(key, write)
  }

  // #recordCold with the key's fingerprint in the hasher already.
  #recordHashed(key: string, write: boolean): number {
    const hasher = this.#hasher
    const sampled = this.#samples.isSampled(hasher.h1, hasher.h2)
    if (sampled) this.#samples.count(key)
    const estimate = this.sketch.addAt(hasher.h1, hasher.h2)
    // The heap floor is a lower bound on the weakest candidate, so this test never refuses a key that
    // deserves a place; #admit checks against the true minimum. A key below the average cell load
    // (total / width) is within the sketch's own noise: admitting it would churn candidates to learn nothing,
    // which under uniform traffic made recording 40% slower.
    if (
      (estimate > this.#heap.floor() && estimate > this.#total >>> this.#widthBits) ||
      estimate >= this.#reportFloor ||
      this.#heap.size < this.capacity
    ) {
      return this.#admit(key, estimate, write, sampled, hasher.h1, hasher.h2) ? 1 : 0
    }
    return 0
  }

  /**
   * Notes that a read of `key`, already recorded, found nothing upstream; `weight` lets a caller that samples
   * which replies it watches count each sampled miss for the ones it did not. Only tracked keys keep misses: a
   * miss matters to the aggregator when the key is hot, and hot keys are candidates.
   */
  recordMiss(key: string, weight = 1): void {
    this.#drain()
    const candidate = this.#index.get(key)
    // A sampled estimate can overshoot; a key cannot miss more often than it was read.
    if (candidate !== undefined) candidate.misses = Math.min(candidate.misses + weight, candidate.reads)
  }

  /**
   * ORs `forms` into a tracked key's forms for the window, for a caller that learns a request's form only after
   * record() answered that the key is tracked (non-zero): the key is a candidate, so no pending batch to count.
   */
  recordForms(key: string, forms: number): void {
    const candidate = this.#index.get(key)
    if (candidate !== undefined) candidate.forms |= forms
  }

  /** The current window's estimate for `key`. */
  estimate(key: string): number {
    this.#drain()
    const candidate = this.#index.get(key)
    return candidate !== undefined ? candidate.count : this.sketch.estimate(key)
  }

  /** Requests recorded in the open window. */
  get total(): number {
    return this.#total
  }

  /** The worst overcount the sketch promises with probability 1 - e^-depth: (e / width) x requests. */
  errorBound(): number {
    return (Math.E / this.sketch.width) * this.#total
  }

  /**
   * A copy of the open window's sketch with the candidates folded in: a sketch that answers for every key and
   * merges cell by cell with other agents' sketches of the same dimensions and seed.
   */
  toSketch(): CountMinSketch {
    this.#drain()
    const copy = CountMinSketch.fromCells(this.sketch.toCells(), this.sketch.total, this.sketch)
    for (const candidate of this.#heap.values())
      copy.addAtCells(candidate.cells, candidate.count - candidate.prior)
    for (const candidate of this.#pinned.values())
      copy.addAtCells(candidate.cells, candidate.count - candidate.prior)
    return copy
  }

  /** The open window's hitters so far, selected as rollover() would, without closing the window. */
  peek(): HeavyHitter[] {
    this.#drain()
    return this.#hitters(this.#byCount())
  }

  /** Closes the open window at `windowEnd` (epoch ms), returns its summary and opens the next one. */
  rollover(windowEnd: number): WindowSummary {
    this.#drain()
    const tracked = this.#byCount()
    const summary: WindowSummary = {
      windowStart: this.#windowStart,
      windowMs: windowEnd - this.#windowStart,
      total: this.#total,
      hitters: this.#hitters(tracked),
      overflowed: this.#overflowed,
    }
    const errorSample = this.#samples.summarise(this.#index.all, this.sketch, this.errorBound())
    if (errorSample !== undefined) summary.errorSample = errorSample
    this.#startWindow(windowEnd, tracked)
    return summary
  }

  #byCount(): Candidate[] {
    return [...this.#heap.values()].sort((a, b) => b.count - a.count)
  }

  // The top K, then every further key at or above the report floor, then every pinned key requested; highest
  // first.
  #hitters(tracked: readonly Candidate[]): HeavyHitter[] {
    const hitters: HeavyHitter[] = []
    for (let i = 0; i < tracked.length; i++) {
      const candidate = tracked[i] as Candidate
      if (candidate.count === 0 || (i >= this.topK && candidate.count < this.#reportFloor)) break
      hitters.push(hitterOf(candidate))
    }
    if (this.#pinned.size === 0) return hitters
    for (const candidate of this.#pinned.values()) {
      if (candidate.count > 0) hitters.push(hitterOf(candidate))
    }
    return hitters.sort((a, b) => b.count - a.count)
  }

  // Keeps the strongest candidates into the next window with zeroed counts: a key that stays hot is then
  // counted exactly from the first request of the window instead of being re-admitted with sketch noise.
  #startWindow(windowStart: number, tracked: readonly Candidate[]): void {
    this.#hotAfter = Math.max(HOT_MIN, this.#total >>> this.#widthBits)
    this.sketch.clear()
    this.#heap.clear()
    this.#overflowed = 0
    this.#total = 0
    this.#windowStart = windowStart
    this.#samples.clear()
    for (const candidate of this.#pinned.values()) resetCounts(candidate)
    for (let i = 0; i < tracked.length; i++) {
      const candidate = tracked[i] as Candidate
      if (i >= this.capacity) {
        this.#index.delete(candidate)
        continue
      }
      resetCounts(candidate)
      this.#heap.push(candidate)
    }
  }

  // h1, h2: the key's fingerprint, from which its cells are placed (only now: most cold keys are never admitted).
  #admit(key: string, estimate: number, write: boolean, sampled: boolean, h1: number, h2: number): boolean {
    let candidate: Candidate
    if (this.#heap.size < this.capacity) {
      candidate = new Candidate(key, this.sketch.depth)
    } else {
      const weakest = this.#heap.min() as Candidate
      if (estimate <= weakest.count && estimate < this.#reportFloor) return false
      if (weakest.count >= this.#reportFloor) {
        // Every tracked key must be reported this window, so grow rather than evict one of them.
        if (this.#heap.size >= this.maxCandidates) {
          this.#overflowed++
          return false
        }
        candidate = new Candidate(key, this.sketch.depth)
      } else {
        this.#heap.popMin()
        this.#index.delete(weakest)
        // Hand the exact count back to the sketch, so the evicted key's estimate stays an upper bound.
        this.sketch.addAtCells(weakest.cells, weakest.count - weakest.prior)
        this.#samples.fold(weakest)
        candidate = weakest
      }
    }
    candidate.key = key
    candidate.count = estimate
    candidate.prior = estimate
    candidate.reads = write ? 0 : 1
    candidate.writes = write ? 1 : 0
    candidate.misses = 0
    candidate.forms = 0
    // With deferColdKeys a key is admitted in the batch, and record() answered 0 for the admitting request too.
    candidate.unwatchedReads = this.#deferCold && !write ? 1 : 0
    candidate.sampled = sampled
    candidate.sampleHits = 0
    this.sketch.cellsAt(h1, h2, candidate.cells)
    this.#heap.push(candidate)
    this.#index.add(candidate, h1, h2, false)
    if (estimate === this.fastFloor || (estimate > this.fastFloor && estimate - 1 < this.fastFloor)) {
      this.#onFloorCrossed?.(key, estimate)
    }
    return true
  }
}

function hitterOf(candidate: Candidate): HeavyHitter {
  const { key, count, reads, writes, forms } = candidate
  return { key, count, reads, writes, misses: estimatedMisses(candidate), forms }
}

// Misses are watched on the reads record() counted (a hot key's); the reads counted in a batch before the key
// turned hot are taken to have missed as often.
function estimatedMisses({ misses, reads, unwatchedReads }: Candidate): number {
  if (unwatchedReads === 0 || misses === 0 || reads <= unwatchedReads) return misses
  return Math.min(reads, Math.round((misses * reads) / (reads - unwatchedReads)))
}

function resetCounts(candidate: Candidate): void {
  candidate.unwatchedReads = 0
  candidate.sampleHits = 0
  candidate.count = 0
  candidate.prior = 0
  candidate.reads = 0
  candidate.writes = 0
  candidate.misses = 0
  candidate.forms = 0
}

function positiveInteger(option: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new InvalidSketchOptionError(option, `must be a positive integer, got ${value}`)
  }
  return value
}
