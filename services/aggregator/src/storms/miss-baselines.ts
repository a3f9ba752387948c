import type { WindowCounters } from '../detection/window-counters.js'

/** How many of the newest windows before the judged one are read again every time: reports still arrive for them. */
const UNSETTLED_WINDOWS = 2

/** A key's baseline: its mean misses per window (undefined: no quiet past), or a lower bound of it (exact: false). */
export interface Baseline {
  mean: number | undefined
  exact: boolean
}

/** A settled window's cluster-wide misses of the keys read in it (null: not reported), and when it was last read. */
interface KeptWindow {
  misses: Map<string, number | null>
  readAt: number
}

/** One window's read for the keys asked for in one turn of the event loop: key -> misses (null: not reported). */
interface PendingRead {
  /** The keys of each judgement that asked (most turns have one per window read). */
  keys: Array<readonly string[]>
  promise: Promise<Map<string, number | null>>
  resolve(misses: Map<string, number | null>): void
  reject(error: unknown): void
}

/**
 * Each key's miss baseline: its mean misses per window over the `windows` windows before the one judged, counting
 * only the windows in which agents reported it, and undefined when they reported it in fewer than half of them (a
 * key that misses from the moment it is first read has no normal to jump from).
 *
 * A key at the storm floor is judged once a window for as long as it stays there, and its baseline then slides by
 * one window. The windows older than the newest two are settled (reports come for the newest window or two), so
 * their sums are kept here and only the newest two are read again (and the one that just settled, once more, to
 * keep): three reads a window for such a key instead of one per baseline window, which is what made the watch
 * cost most of ingest when many keys miss a lot. Reads asked for in one turn share one read per window (a replica
 * catching up judges many windows of a key at once); what is kept is dropped by the clock (not by window), so
 * that order does not matter.
 */
export class MissBaselines {
  readonly #counters: Pick<WindowCounters, 'misses'>
  readonly #windows: number
  readonly #windowMs: number
  readonly #now: () => number
  // Window start -> what was read of it. One map per window, not one per key with an object per window: what is
  // kept lives for a baseline's span, and objects that old are what the garbage collector spends its time on.
  readonly #kept = new Map<number, KeptWindow>()
  #prunedAt: number
  // Window start -> the read not sent yet.
  #pending = new Map<number, PendingRead>()

  constructor(
    counters: Pick<WindowCounters, 'misses'>,
    windows: number,
    windowMs: number,
    now: () => number,
  ) {
    this.#counters = counters
    this.#windows = windows
    this.#windowMs = windowMs
    this.#now = now
    this.#prunedAt = now()
  }

  /**
   * Each key's baseline for the window starting at windowStart (see the class comment), in the keys' order. With
   * `enough`, a key whose settled windows alone show its mean to be at least enough[i] comes back with that lower
   * bound (exact: false) and its newest windows unread: the watch needs only to know that the misses are no storm.
   */
  async means(keys: readonly string[], windowStart: number, enough?: readonly number[]): Promise<Baseline[]> {
    const now = this.#now()
    this.#prune(now)
    const unsettledFrom = windowStart - UNSETTLED_WINDOWS * this.#windowMs
    const half = Math.ceil(this.#windows / 2)
    const starts = Array.from({ length: this.#windows }, (_, i) => windowStart - (i + 1) * this.#windowMs)
    const settled = starts.filter((start) => start < unsettledFrom)
    // Plain values and one read per window for all the keys: a window's judgement has hundreds of keys at the
    // floor, and a promise per key and window was most of what the watch cost.
    await Promise.all(
      settled.map(async (start) => {
        const kept = this.#kept.get(start)?.misses
        const reading = kept === undefined ? keys : keys.filter((key) => !kept.has(key))
        // A failed read is not kept: the next judgement reads the window again.
        if (reading.length > 0) this.#keep(start, reading, await this.#read(reading, start), now)
      }),
    )
    const unsettled = starts.length - settled.length
    const baselines: Baseline[] = []
    const exactly: number[] = []
    keys.forEach((key, i) => {
      const { sum, reported } = this.#sum(key, settled, undefined)
      // The newest windows add misses, never take any away, and at most `unsettled` reports of the key.
      const bound = sum / Math.max(1, reported + unsettled)
      if (reported + unsettled < half) baselines.push({ mean: undefined, exact: true })
      else if (enough !== undefined && bound >= (enough[i] as number))
        baselines.push({ mean: bound, exact: false })
      else {
        baselines.push({ mean: undefined, exact: true })
        exactly.push(i)
      }
    })
    if (exactly.length === 0) return baselines
    const newest = starts.filter((start) => start >= unsettledFrom)
    const reading = exactly.map((i) => keys[i] as string)
    const fresh = new Map(
      await Promise.all(newest.map(async (start) => [start, await this.#read(reading, start)] as const)),
    )
    for (const i of exactly) {
      const { sum, reported } = this.#sum(keys[i] as string, starts, fresh)
      baselines[i] = { mean: reported < half ? undefined : sum / reported, exact: true }
    }
    return baselines
  }

  #sum(
    key: string,
    starts: readonly number[],
    fresh: Map<number, Map<string, number | null>> | undefined,
  ): { sum: number; reported: number } {
    let sum = 0
    let reported = 0
    for (const start of starts) {
      const misses = fresh?.get(start)?.get(key) ?? this.#kept.get(start)?.misses.get(key) ?? null
      if (misses === null) continue
      sum += misses
      reported++
    }
    return { sum, reported }
  }

  #keep(start: number, keys: readonly string[], read: Map<string, number | null>, now: number): void {
    let kept = this.#kept.get(start)
    if (kept === undefined) {
      kept = { misses: new Map(), readAt: now }
      this.#kept.set(start, kept)
    }
    kept.readAt = now
    for (const key of keys) kept.misses.set(key, read.get(key) ?? null)
  }

  // Reads asked for in one turn go together, one read (an HMGET per counter shard) per window for all their keys:
  // the reports of a batch, and a replica catching up on many windows at once, cost a few commands per window.
  #read(keys: readonly string[], start: number): Promise<Map<string, number | null>> {
    if (this.#pending.size === 0) setImmediate(() => this.#flush())
    let read = this.#pending.get(start)
    if (read === undefined) {
      let resolve: PendingRead['resolve'] = () => {}
      let reject: PendingRead['reject'] = () => {}
      const promise = new Promise<Map<string, number | null>>((res, rej) => {
        resolve = res
        reject = rej
      })
      read = { keys: [], promise, resolve, reject }
      this.#pending.set(start, read)
    }
    read.keys.push(keys)
    return read.promise
  }

  #flush(): void {
    const pending = this.#pending
    this.#pending = new Map()
    for (const [start, read] of pending) {
      const keys =
        read.keys.length === 1 ? (read.keys[0] as readonly string[]) : [...new Set(read.keys.flat())]
      this.#counters.misses(keys, start).then((counts) => {
        const misses = new Map<string, number | null>()
        keys.forEach((key, i) => {
          misses.set(key, counts[i] ?? null)
        })
        read.resolve(misses)
      }, read.reject)
    }
  }

  // Once a baseline's span: windows last read longer ago than two spans are dropped.
  #prune(now: number): void {
    const span = this.#windows * this.#windowMs
    if (now - this.#prunedAt < span) return
    this.#prunedAt = now
    for (const [start, { readAt }] of this.#kept) if (now - readAt > 2 * span) this.#kept.delete(start)
  }
}
