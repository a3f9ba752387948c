import type { Logger } from 'pino'

/** A part of the aggregator with a lifetime: started in order, stopped in reverse. */
export interface Component {
  /** For logs. */
  readonly name: string
  start(): Promise<void>
  /** Also called after a failed start(), so it must cope with a half-started component. */
  stop(): Promise<void>
}

/**
 * Starts components in the order added and stops them in reverse, so each one's dependencies (added earlier)
 * outlive it. A start that fails stops everything already started, then rethrows.
 */
export class Components {
  readonly #pending: Component[] = []
  readonly #started: Component[] = []
  readonly #log: Logger | undefined
  #state: 'new' | 'starting' | 'started' | 'stopped' = 'new'
  #stopping: Promise<void> | undefined

  constructor(log?: Logger) {
    this.#log = log
  }

  /** Adds a component; only before start(). */
  add(component: Component): void {
    if (this.#state !== 'new') throw new Error(`cannot add component ${component.name} after start()`)
    this.#pending.push(component)
  }

  /** Starts every component in order. */
  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`start() called when ${this.#state}`)
    this.#state = 'starting'
    for (const component of this.#pending) {
      // Registered first, so a failing start is stopped too and can release what it did open.
      this.#started.push(component)
      try {
        await component.start()
      } catch (error) {
        this.#log?.error({ err: error, component: component.name }, 'start failed')
        await this.stop()
        throw error
      }
    }
    this.#state = 'started'
  }

  /** Stops every started component in reverse order; failures are logged and do not stop the others. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#state = 'stopped'
      for (const component of this.#started.reverse()) {
        try {
          await component.stop()
        } catch (error) {
          this.#log?.warn({ err: error, component: component.name }, 'stop failed')
        }
      }
      this.#started.length = 0
    })()
    return this.#stopping
  }
}

/**
 * Components started one after another and stopped all at once. The parts that take work in (report ingest, the
 * HTTP listener) stop this way, so that a slow HTTP client does not hold ingest open or the other way round: both
 * drain at the same time, inside one shutdown deadline.
 */
export function together(name: string, parts: readonly Component[]): Component {
  const started: Component[] = []
  return {
    name,
    start: async () => {
      for (const part of parts) {
        // Registered first, as in Components: a part whose start fails is stopped too.
        started.push(part)
        await part.start()
      }
    },
    stop: async () => {
      const stopping = started.splice(0)
      const results = await Promise.allSettled(stopping.map((part) => part.stop()))
      const failed = stopping.filter((_, i) => results[i]?.status === 'rejected')
      if (failed.length === 0) return
      throw new AggregateError(
        results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : [])),
        `stop failed: ${failed.map((part) => part.name).join(', ')}`,
      )
    },
  }
}
