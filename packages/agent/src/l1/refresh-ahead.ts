/**
 * When an L1 entry is refilled ahead of its expiry: a short lead before it, so that a key read without pause is
 * refilled while its entry still answers (expiry opens no gap in which reads wait on Redis) and still about once
 * per lifetime. The lead is a tenth of the lifetime, at most REFRESH_LEAD_MAX_MS (a fill's round trip on a loaded
 * host: at 10 ms, a loaded machine's late timers let a hot key's readers wait at expiry); entries shorter than
 * REFRESH_MIN_LIFETIME_MS are not worth a timer and refill on their next read.
 */
export const REFRESH_LEAD_MAX_MS = 50
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
