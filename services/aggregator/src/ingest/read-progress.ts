/**
 * Whether one report stream's read loop is making progress, for readiness. A pass of the loop is a blocking
 * read, the handling of what it returned, and the periodic claim. The loop is stalled when its passes have
 * failed without a break for longer than the bound, or when one pass has been under way for longer than the
 * bound plus the read's own blocking time (a server that holds the read without answering, as CLIENT PAUSE
 * does, never fails it).
 */
export class ReadProgress {
  readonly stream: string
  #failingSince: number | undefined
  #lastError = ''
  #passSince: number | undefined

  constructor(stream: string) {
    this.stream = stream
  }

  /** A pass begins at `now` (milliseconds on a monotonic clock). */
  began(now: number): void {
    this.#passSince = now
  }

  /** The pass completed; returns how long the loop had been failing before it, or undefined if it was not. */
  succeeded(now: number): number | undefined {
    const failedFor = this.#failingSince === undefined ? undefined : now - this.#failingSince
    this.#failingSince = undefined
    this.#passSince = undefined
    return failedFor
  }

  /** The pass failed with `error`. */
  failed(now: number, error: unknown): void {
    this.#lastError = error instanceof Error ? error.message : String(error)
    this.#passSince = undefined
    this.#failingSince ??= now
  }

  /** Why the loop counts as stalled at `now`, or undefined while it makes progress. */
  stall(now: number, boundMs: number, blockMs: number): string | undefined {
    if (this.#failingSince !== undefined && now - this.#failingSince > boundMs) {
      return `${this.stream}: reads failing for ${Math.round(now - this.#failingSince)} ms (${this.#lastError})`
    }
    if (this.#passSince !== undefined && now - this.#passSince > boundMs + blockMs) {
      return `${this.stream}: no read completed for ${Math.round(now - this.#passSince)} ms`
    }
    return undefined
  }
}
