import { setTimeout as sleep } from 'node:timers/promises'

/** Options of waitUntil. */
export interface WaitUntilOptions {
  readonly timeoutMs: number
  readonly intervalMs?: number
  /** Stops waiting early, e.g. once the server process has died and can never become ready. */
  readonly giveUp?: () => boolean
}

/** Polls `check` until it returns true (→ true), the timeout passes or `giveUp` says so (→ false). */
export async function waitUntil(check: () => Promise<boolean>, options: WaitUntilOptions): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs
  for (;;) {
    if (options.giveUp?.()) return false
    if (await check().catch(() => false)) return true
    if (Date.now() >= deadline) return false
    await sleep(options.intervalMs ?? 50)
  }
}
