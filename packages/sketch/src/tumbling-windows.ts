import { type Clock, systemClock } from './clock.js'
import { InvalidSketchOptionError } from './errors.js'
import type { WindowRecorder, WindowSummary } from './window-recorder.js'

/** What drives a recorder's windows. */
export interface TumblingWindowsOptions {
  windowMs?: number
  clock?: Clock
  /** Receives each closed window. It runs on the timer, never on a request. */
  onWindow: (summary: WindowSummary) => void
}

export const DEFAULT_WINDOW_MS = 1000

/**
 * Closes a recorder's window on every multiple of windowMs since the epoch. Aligning to the epoch, not to when a
 * process started, means every agent's window N covers the same second, so the aggregator can sum them.
 */
export class TumblingWindows {
  readonly windowMs: number
  readonly #recorder: WindowRecorder
  readonly #clock: Clock
  readonly #onWindow: (summary: WindowSummary) => void
  #timer: unknown
  #running = false

  constructor(recorder: WindowRecorder, options: TumblingWindowsOptions) {
    const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS
    if (!Number.isInteger(windowMs) || windowMs < 10) {
      throw new InvalidSketchOptionError('windowMs', `must be an integer of at least 10, got ${windowMs}`)
    }
    this.windowMs = windowMs
    this.#recorder = recorder
    this.#clock = options.clock ?? systemClock
    this.#onWindow = options.onWindow
  }

  /** Opens the current window and schedules its end. Requests recorded before start() count toward it. */
  start(): void {
    if (this.#running) return
    this.#running = true
    const now = this.#clock.now()
    const currentStart = now - (now % this.windowMs)
    // Discard whatever was recorded before start as part of an unaligned window.
    this.#recorder.rollover(currentStart)
    this.#schedule(currentStart + this.windowMs)
  }

  /** Stops the timer; with flush, closes the open (partial) window now and hands it to onWindow. */
  stop(options: { flush?: boolean } = {}): void {
    if (!this.#running) return
    this.#running = false
    this.#clock.clearTimeout(this.#timer)
    if (options.flush) this.#onWindow(this.#recorder.rollover(this.#clock.now()))
  }

  #schedule(windowEnd: number): void {
    this.#timer = this.#clock.setTimeout(() => this.#tick(windowEnd), windowEnd - this.#clock.now())
  }

  #tick(windowEnd: number): void {
    if (!this.#running) return
    const now = this.#clock.now()
    // A stalled event loop may wake us windows late: close at the boundary that passed most recently, so a
    // window's length says truthfully how long it covered.
    const boundary = Math.max(windowEnd, now - (now % this.windowMs))
    this.#onWindow(this.#recorder.rollover(boundary))
    this.#schedule(boundary + this.windowMs)
  }
}
