/**
 * When an L1 entry is refilled ahead of its expiry: a short lead before it, so that a key read without pause is
 * refilled while its entry still answers (expiry opens no gap in which reads wait on Redis) and still about once
 * per lifetime. The lead is a tenth of the lifetime, at most REFRESH_LEAD_MAX_MS: ten times a fill's round trip to a
 * Redis in the same zone, and each ms of lead is a refill sooner. A refill that lands late costs no read: reads of
 * the expired entry wait on it (they join the fill in flight), for the rest of its round trip. Entries shorter than
 * REFRESH_MIN_LIFETIME_MS are not worth a timer and refill on their next read.
 */
export const REFRESH_LEAD_MAX_MS = 10
export const REFRESH_MIN_LIFETIME_MS = 20

/** How long after its store an entry of `lifetimeMs` is refilled, or undefined for never. */
export function refreshDelay(lifetimeMs: number): number | undefined {
  if (lifetimeMs < REFRESH_MIN_LIFETIME_MS) return undefined
  return lifetimeMs - Math.min(Math.floor(lifetimeMs / 10), REFRESH_LEAD_MAX_MS)
}

/** One pending refresh per key; an invalidation or a retirement cancels it (the entry it would refresh is gone). */
export class RefreshTimers {
  readonly #timers = new Map<string, NodeJS.Timeout>()

  schedule(name: string, delayMs: number, run: () => void): void {
    this.cancel(name)
    const timer = setTimeout(() => {
      if (this.#timers.get(name) === timer) this.#timers.delete(name)
      run()
    }, delayMs)
    // A refresh never keeps a process alive.
    timer.unref()
    this.#timers.set(name, timer)
  }

  cancel(name: string): void {
    const timer = this.#timers.get(name)
    if (timer === undefined) return
    clearTimeout(timer)
    this.#timers.delete(name)
  }

  cancelAll(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer)
    this.#timers.clear()
  }
}
