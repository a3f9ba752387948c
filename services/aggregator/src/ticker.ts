import type { Logger } from 'pino'

/**
 * Runs a task every `intervalMs`, never two at once: the next run is scheduled when the previous one ends, so a
 * slow run (Postgres or Redis down) delays the next instead of piling runs up. A failing run is logged; the
 * task runs again at the next tick.
 */
export class Ticker {
  readonly #name: string
  readonly #intervalMs: number
  readonly #task: () => Promise<unknown>
  readonly #log: Logger | undefined
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #stopped = true

  constructor(name: string, intervalMs: number, task: () => Promise<unknown>, log?: Logger) {
    this.#name = name
    this.#intervalMs = intervalMs
    this.#task = task
    this.#log = log
  }

  /** Schedules the first run one interval from now. */
  start(): void {
    if (!this.#stopped) return
    this.#stopped = false
    this.#schedule()
  }

  /** Cancels the next run and waits for one in progress to end. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#running
  }

  #schedule(): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      this.#running = this.#run().finally(() => {
        this.#running = undefined
        this.#schedule()
      })
    }, this.#intervalMs)
    // A ticker alone must not keep the process alive.
    this.#timer.unref()
  }

  async #run(): Promise<void> {
    try {
      await this.#task()
    } catch (error) {
      this.#log?.warn({ err: error, task: this.#name }, 'periodic task failed')
    }
  }
}
