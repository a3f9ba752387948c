/**
 * One stream of the scenario's requests at a fixed rate from a start time, paced by the clock rather than by timer
 * ticks: a 10 ms interval on a busy event loop fires every 11 or 12 ms, and sending a tick's worth each time
 * delivered 4,000-4,300 of 4,500 advertised requests a second. Each tick sends what is owed since the start.
 */
export class PacedStream {
  readonly #perMs: number
  readonly #startMs: number
  #sent = 0

  constructor(requestsPerSecond: number, startSeconds: number) {
    this.#perMs = requestsPerSecond / 1000
    this.#startMs = startSeconds * 1000
  }

  /** How many requests to send now, `elapsedMs` into the timeline: none before the start. */
  due(elapsedMs: number): number {
    if (elapsedMs < this.#startMs) return 0
    const owed = Math.floor((elapsedMs - this.#startMs) * this.#perMs)
    // After a stall (a GC pause, a busy machine) at most MAX_CATCH_UP_MS of backlog is sent at once: the rest is
    // dropped rather than sent as one burst that would look like a spike of its own.
    const floor = owed - Math.ceil(MAX_CATCH_UP_MS * this.#perMs)
    if (this.#sent < floor) this.#sent = floor
    const due = owed - this.#sent
    this.#sent = owed
    return due
  }
}

const MAX_CATCH_UP_MS = 100
