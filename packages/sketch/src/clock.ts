/** Time and timers, injected so that windows and TTLs can be driven exactly in tests. */
export interface Clock {
  now(): number
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/** The real clock: Date.now and Node timers (unref'd, so an idle timer never keeps a process alive). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

interface PendingTimer {
  at: number
  seq: number
  callback: () => void
}

/** A clock that moves only when told to, firing due timers in order: for exact tests. */
export class ManualClock implements Clock {
  #now: number
  #seq = 0
  readonly #timers = new Map<number, PendingTimer>()

  constructor(start = 0) {
    this.#now = start
  }

  now(): number {
    return this.#now
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const seq = ++this.#seq
    this.#timers.set(seq, { at: this.#now + Math.max(0, ms), seq, callback })
    return seq
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number)
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.#timers.size
  }

  /** Moves time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const target = this.#now + ms
    for (;;) {
      let next: PendingTimer | undefined
      for (const timer of this.#timers.values()) {
        if (
          timer.at <= target &&
          (next === undefined || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq))
        ) {
          next = timer
        }
      }
      if (next === undefined) break
      this.#timers.delete(next.seq)
      this.#now = Math.max(this.#now, next.at)
      next.callback()
    }
    this.#now = target
  }
}
