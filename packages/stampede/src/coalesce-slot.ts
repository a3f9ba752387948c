import type { Clock } from '@heatsink/sketch'

interface Waiter<T> {
  deadline: number
  joinedAt: number
  resolve(value: T): void
  reject(error: unknown): void
  /** Called when the deadline passes first: returns what the waiter gets instead, or throws. */
  onTimeout(waitedMs: number): T
  /** Stops listening to the caller's AbortSignal, once the waiter has been served. */
  unwatch?: () => void
}

/**
 * One in-flight piece of work on a key and the callers waiting for it (key, in-flight id, waiters, result, err,
 * resolvedAt). The work's result or error reaches every waiter at
 * once; a waiter whose deadline passes first leaves alone, and the work and the other waiters go on.
 *
 * Waiters are kept in deadline order and served by one timer for the earliest deadline, not one timer each:
 * a herd of ten thousand callers costs ten thousand array slots, not ten thousand timers.
 *
 * A caller may also leave when its AbortSignal fires. The work has a signal of its own (`signal`), fired when
 * the last waiter leaves that way, or by abortWork(): work that nobody waits for any more may stop. A waiter
 * that leaves at its deadline does not count as giving up the work, whose result still fills the cache.
 */
export class CoalesceSlot<T> {
  readonly key: string
  /** Identifies this flight among all of the guard's, for logs. */
  readonly id: number
  /** The generation ticket the work started under. */
  readonly ticket: number
  /** Callers that joined, the first included. */
  joined = 0
  resolvedAt: number | undefined
  readonly #clock: Clock
  readonly #waiters: Waiter<T>[] = []
  #head = 0
  #settled = false
  #result: { value: T } | undefined
  #error: unknown
  #timer: unknown
  #timerAt = Number.POSITIVE_INFINITY
  // Made on first use: most work never looks at its signal, and most flights are never abandoned.
  #controller: AbortController | undefined

  constructor(key: string, id: number, ticket: number, clock: Clock) {
    this.key = key
    this.id = id
    this.ticket = ticket
    this.#clock = clock
  }

  get settled(): boolean {
    return this.#settled
  }

  /** The work's value, once it has settled with one. */
  get result(): { value: T } | undefined {
    return this.#result
  }

  /** The work's error, once it has settled with one. */
  get error(): unknown {
    return this.#error
  }

  /** Waiters still waiting. */
  get pending(): number {
    return this.#waiters.length - this.#head
  }

  /** The work's signal: aborted once every waiter has left by its own signal, or by abortWork(). */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController()
    return this.#controller.signal
  }

  /** True once the work's signal has fired: nobody wants the work's result any more. */
  get abandoned(): boolean {
    return this.#controller?.signal.aborted === true
  }

  /**
   * Waits for the work, at most `maxWaitMs`; then `onTimeout(waitedMs)` decides what this caller gets. A
   * caller whose `signal` fires first is rejected at once with the signal's reason.
   */
  join(maxWaitMs: number, onTimeout: (waitedMs: number) => T, signal?: AbortSignal): Promise<T> {
    this.joined++
    return new Promise<T>((resolve, reject) => {
      const joinedAt = this.#clock.now()
      const waiter: Waiter<T> = { deadline: joinedAt + maxWaitMs, joinedAt, resolve, reject, onTimeout }
      this.#insert(waiter)
      if (waiter.deadline < this.#timerAt) this.#arm(waiter.deadline)
      if (signal !== undefined) this.#watch(waiter, signal)
    })
  }

  /** Fires the work's signal with `reason` (the guard is closing). */
  abortWork(reason: unknown): void {
    this.#controller ??= new AbortController()
    this.#controller.abort(reason)
  }

  /** Hands `value` to every waiter; later calls of either settle method do nothing. */
  resolve(value: T): void {
    if (this.#settled) return
    this.#result = { value }
    this.#finish()
    for (const waiter of this.#drain()) {
      waiter.unwatch?.()
      waiter.resolve(value)
    }
  }

  /** Hands `error` to every waiter. */
  reject(error: unknown): void {
    if (this.#settled) return
    this.#error = error
    this.#finish()
    for (const waiter of this.#drain()) {
      waiter.unwatch?.()
      waiter.reject(error)
    }
  }

  #finish(): void {
    this.#settled = true
    this.resolvedAt = this.#clock.now()
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerAt = Number.POSITIVE_INFINITY
  }

  #drain(): Waiter<T>[] {
    const waiting = this.#waiters.slice(this.#head)
    this.#waiters.length = 0
    this.#head = 0
    return waiting
  }

  #watch(waiter: Waiter<T>, signal: AbortSignal): void {
    if (signal.aborted) {
      this.#leave(waiter, signal.reason)
      return
    }
    const onAbort = () => this.#leave(waiter, signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    waiter.unwatch = () => signal.removeEventListener('abort', onAbort)
  }

  // An aborted caller leaves at once; the last one to leave takes the work's reason to go on with it.
  #leave(waiter: Waiter<T>, reason: unknown): void {
    const at = this.#waiters.indexOf(waiter, this.#head)
    if (at < 0) return
    this.#waiters.splice(at, 1)
    waiter.reject(reason)
    if (this.pending === 0 && !this.#settled) this.abortWork(reason)
  }

  // Callers with one maxWaitMs join in time order, so the common insert is an append.
  #insert(waiter: Waiter<T>): void {
    const waiters = this.#waiters
    let at = waiters.length
    while (at > this.#head && waiters[at - 1]!.deadline > waiter.deadline) at--
    if (at === waiters.length) waiters.push(waiter)
    else waiters.splice(at, 0, waiter)
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timerAt = at
    this.#timer = this.#clock.setTimeout(() => this.#expire(), Math.max(0, at - this.#clock.now()))
  }

  #expire(): void {
    this.#timer = undefined
    this.#timerAt = Number.POSITIVE_INFINITY
    const now = this.#clock.now()
    const waiters = this.#waiters
    while (this.#head < waiters.length && waiters[this.#head]!.deadline <= now) {
      const waiter = waiters[this.#head++]!
      waiter.unwatch?.()
      try {
        waiter.resolve(waiter.onTimeout(now - waiter.joinedAt))
      } catch (error) {
        waiter.reject(error)
      }
    }
    if (this.#head === waiters.length) {
      waiters.length = 0
      this.#head = 0
    } else {
      this.#arm(waiters[this.#head]!.deadline)
    }
  }
}
