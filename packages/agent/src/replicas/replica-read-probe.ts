import { Redis } from 'ioredis'

/**
 * For replica_read tests: a writer that sets `key` to its own time every `intervalMs` on the primary and keeps
 * when each write was answered, so that the age of any value read can be told: a read issued at t that returns
 * stamp s is as old as the time since the first later write was answered (0 when none was by t).
 */
export class StampedWriter {
  readonly #redis: Redis
  readonly #key: string
  // When each write (by its sequence) was answered; Infinity while it is not.
  readonly #answered: number[] = []
  #running = false
  #latest = ''
  #loop: Promise<void> | undefined

  constructor(primary: { host: string; port: number }, key: string) {
    this.#redis = new Redis({ host: primary.host, port: primary.port, lazyConnect: false })
    this.#key = key
  }

  /** Writes the first stamp and resolves once it is answered; later stamps follow every `intervalMs`. */
  async start(intervalMs: number): Promise<void> {
    await this.#write()
    this.#running = true
    this.#loop = (async () => {
      while (this.#running) {
        await new Promise((resolve) => setTimeout(resolve, intervalMs))
        await this.#write().catch(() => {})
      }
    })()
  }

  async stop(): Promise<void> {
    this.#running = false
    await this.#loop
    await this.#redis.quit().catch(() => {})
  }

  /** The value of the last write answered (`<sequence>:<time written>`). */
  get latest(): string {
    return this.#latest
  }

  /** How old `value` (`<sequence>:<time>`) was when a read issued at `issuedAt` returned it, in ms. */
  ageOf(value: string | null, issuedAt: number): number {
    const sequence = Number(String(value).split(':')[0])
    if (!(sequence < this.#answered.length)) throw new Error(`read ${value}, which was never written`)
    const next = this.#answered[sequence + 1]
    return next === undefined || next > issuedAt ? 0 : issuedAt - next
  }

  async #write(): Promise<void> {
    const sequence = this.#answered.length
    this.#answered.push(Number.POSITIVE_INFINITY)
    const value = `${sequence}:${Date.now()}`
    await this.#redis.set(this.#key, value)
    this.#answered[sequence] = Date.now()
    this.#latest = value
  }
}

/** Calls of `command` a server has answered (INFO commandstats), for shares measured server-side. */
export async function commandCalls(server: { host: string; port: number }, command: string): Promise<number> {
  const redis = new Redis({ host: server.host, port: server.port })
  try {
    const info = await redis.info('commandstats')
    const line = info.split('\n').find((l) => l.startsWith(`cmdstat_${command}:`))
    return line === undefined ? 0 : Number(/calls=(\d+)/.exec(line)?.[1] ?? 0)
  } finally {
    redis.disconnect()
  }
}
