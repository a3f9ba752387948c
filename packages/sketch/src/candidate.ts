/** One tracked key in the current window. Mutable on purpose: the record path updates it in place. */
export class Candidate {
  key: string
  /** Upper bound on the key's requests this window: `prior` plus the exact counts since admission. */
  count: number
  /** The sketch's estimate at admission (admitting request included): what the sketch already holds for the key. */
  prior: number
  /** Reads and writes counted exactly since admission (their sum may be below count). */
  reads: number
  writes: number
  /** Reads that found nothing upstream, counted while tracked on replies a caller watched (see unwatchedReads). */
  misses: number
  /** The command forms seen while tracked (a bitmask the caller defines: the agent's CommandForm bits). */
  forms: number
  /** The key's sketch cells, for folding its exact count back into the sketch. */
  readonly cells: Uint32Array
  /** In the exact-count sample that measures the sketch's error (WindowRecorder's errorSampling). */
  sampled: boolean
  /** Requests counted while a candidate, for a sampled key. */
  sampleHits: number
  /** Count when last placed in the heap; below `count` means the heap position is stale. */
  priority: number
  heapIndex: number
  /** Pinned (WindowRecorder.pin): never evicted, so a caller may keep this object and count through it. */
  pinned: boolean
  /** Found by name on the request (CandidateIndex); else only by the batch of deferred keys. */
  onRequest: boolean
  /** Reads counted in the batch of deferred keys: record() answered 0 for them, so no caller watched their replies. */
  unwatchedReads: number
  /** The CandidateIndex's fingerprint slot for the key. */
  slot: number

  constructor(key: string, depth: number) {
    this.key = key
    this.count = 0
    this.prior = 0
    this.reads = 0
    this.writes = 0
    this.misses = 0
    this.forms = 0
    this.cells = new Uint32Array(depth)
    this.sampled = false
    this.sampleHits = 0
    this.priority = 0
    this.heapIndex = -1
    this.pinned = false
    this.onRequest = false
    this.unwatchedReads = 0
    this.slot = 0
  }
}
