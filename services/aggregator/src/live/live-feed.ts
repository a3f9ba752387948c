import type { LiveFrame, LiveState, RatePoint } from '@heatsink/protocol'
import type { Logger } from 'pino'
import type { LiveStateReader } from './live-state-reader.js'

/** Receives each frame; returns nothing, so a slow subscriber cannot hold the feed up. */
export type FrameListener = (frame: LiveFrame, lastWindow: number) => void

export interface LiveFeedOptions {
  reader: LiveStateReader
  windowMs: number
  /** Start of the newest complete window (the traffic reader's rule). */
  latestCompleteWindow: () => number
  log: Logger
  /** Windows the Redis counters still hold, read back when the feed starts or after a gap. Default 60. */
  backfillWindows?: number
  /** Points kept for reconnecting clients and new pages. Default 600 (ten minutes of 1 s windows). */
  keepPoints?: number
}

/**
 * One per replica: while at least one page or CLI watches, reads a frame every window (the new rate points and
 * the current state) and hands it to every subscriber, so ten open dashboards cost one read per window, and
 * nothing is read while nobody watches. Recent points are kept so a client reconnecting with the id of the last
 * point it saw (SSE's Last-Event-ID) gets exactly what it missed.
 */
export class LiveFeed {
  readonly #options: LiveFeedOptions
  readonly #listeners = new Set<FrameListener>()
  readonly #points: RatePoint[] = []
  #state: LiveState | undefined
  #problem: string | null = null
  #timer: NodeJS.Timeout | undefined
  #ticking: Promise<void> | undefined

  constructor(options: LiveFeedOptions) {
    this.#options = options
  }

  /**
   * Adds a listener and gives it, at once, the points after `afterWindow` (all kept points when absent or
   * unknown) with the current state. Returns the function that removes it.
   */
  async subscribe(listener: FrameListener, afterWindow?: number): Promise<() => void> {
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => void this.#tick(), this.#options.windowMs)
      this.#timer.unref()
    }
    // Added after the first read, so its first frame is the catch-up below and not that read's new points alone.
    if (this.#state === undefined) await this.#tick()
    this.#listeners.add(listener)
    if (this.#state !== undefined || this.#problem !== null) {
      const first = this.#points[0]?.windowStart ?? Number.POSITIVE_INFINITY
      const resumable = afterWindow !== undefined && afterWindow >= first
      const points = resumable ? this.#points.filter((p) => p.windowStart > afterWindow) : [...this.#points]
      listener({ points, state: this.#state ?? null, problem: this.#problem }, this.#lastWindow())
    }
    return () => this.#unsubscribe(listener)
  }

  /** Stops reading; subscribers get nothing more. */
  close(): void {
    this.#listeners.clear()
    this.#stop()
  }

  #unsubscribe(listener: FrameListener): void {
    this.#listeners.delete(listener)
    if (this.#listeners.size === 0) this.#stop()
  }

  #stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
    // Kept points would leave a gap when the feed starts again; the state would be stale.
    this.#state = undefined
  }

  #lastWindow(): number {
    return this.#points.at(-1)?.windowStart ?? 0
  }

  // A tick still running when the next is due is not overlapped: both callers wait for the same one.
  #tick(): Promise<void> {
    this.#ticking ??= this.#read().finally(() => {
      this.#ticking = undefined
    })
    return this.#ticking
  }

  async #read(): Promise<void> {
    const { reader, windowMs, latestCompleteWindow, log } = this.#options
    const backfill = this.#options.backfillWindows ?? 60
    const keep = this.#options.keepPoints ?? 600
    try {
      const { absorbedReadsPerSecond: absorbed, ...state } = await reader.state()
      const hotKeys = new Set(state.hotkeys.map((hot) => hot.key))
      const latest = latestCompleteWindow()
      const from = Math.max(this.#lastWindow() + windowMs, latest - (backfill - 1) * windowMs)
      const windows: number[] = []
      for (let w = from; w <= latest; w += windowMs) windows.push(w)
      const points = await Promise.all(
        windows.map((w) => reader.point(w, hotKeys, w === latest ? absorbed : null)),
      )
      // After a gap (nobody watched), the kept points are older than what the counters hold: start afresh.
      if (points.length > 0 && this.#lastWindow() !== 0 && from !== this.#lastWindow() + windowMs) {
        this.#points.length = 0
      }
      this.#points.push(...points)
      if (this.#points.length > keep) this.#points.splice(0, this.#points.length - keep)
      if (this.#problem !== null) log.info('live view reads again')
      this.#state = state
      this.#problem = null
      this.#send({ points, state, problem: null })
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      if (this.#problem === null) log.warn({ err: error }, 'live view cannot read the registry or Redis')
      this.#problem = message
      // Pages keep what they show and say why it is not moving; the next tick tries again.
      this.#send({ points: [], state: this.#state ?? null, problem: message })
    }
  }

  #send(frame: LiveFrame): void {
    const last = this.#lastWindow()
    for (const listener of this.#listeners) listener(frame, last)
  }
}
