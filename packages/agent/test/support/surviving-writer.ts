import type { Cluster, Redis } from 'ioredis'

/**
 * A writer for failover tests: it stamps `key` with a sequence number every `intervalMs` through the client it is
 * given (one that follows the primary, as the application's does) and appends the number to a log in the same
 * MULTI, so that the writes a failover lost (answered by the demoted primary after the new one took over) can be
 * told from those that survived. A read's age counts only surviving writes: the lost ones are Redis's, not a
 * reader's.
 */
export class SurvivingWriter {
  readonly #redis: Redis | Cluster
  readonly #key: string
  readonly #log: string
  // When each write (by its sequence) was answered; absent while it is not.
  readonly #answered: number[] = []
  #survived: Set<number> | undefined
  #running = false
  #loop: Promise<void> | undefined
  errors = 0

  constructor(redis: Redis | Cluster, key: string) {
    this.#redis = redis
    this.#key = key
    // Beside the key, on its slot: a Cluster runs the MULTI on one master.
    this.#log = `${key}:log`
  }

  /** Writes the first stamp and resolves once it is answered; later stamps follow every `intervalMs`. */
  async start(intervalMs: number): Promise<void> {
    await this.#write(0)
    this.#running = true
    this.#loop = (async () => {
      for (let sequence = 1; this.#running; ) {
        await new Promise((resolve) => setTimeout(resolve, intervalMs))
        await this.#write(sequence).then(
          () => sequence++,
          () => this.errors++,
        )
      }
    })()
  }

  /** Stops writing and reads the log on the primary now: the writes that survived. */
  async stop(): Promise<void> {
    this.#running = false
    await this.#loop
    this.#survived = new Set((await this.#redis.lrange(this.#log, 0, -1)).map(Number))
  }

  /**
   * How old `value` was when a read issued at `issuedAt` (Date.now()) returned it: the time since the first later
   * surviving write was answered, 0 when none was by then. Only after stop().
   */
  ageOf(value: string | null, issuedAt: number): number {
    const survived = this.#survived
    if (survived === undefined) throw new Error('ageOf before stop()')
    const sequence = Number(String(value))
    if (Number.isNaN(sequence)) throw new Error(`read ${value}, which was never written`)
    for (let later = sequence + 1; later < this.#answered.length; later++) {
      if (!survived.has(later)) continue
      const answered = this.#answered[later]
      return answered === undefined || answered > issuedAt ? 0 : issuedAt - answered
    }
    return 0
  }

  async #write(sequence: number): Promise<void> {
    await this.#redis.multi().set(this.#key, String(sequence)).rpush(this.#log, String(sequence)).exec()
    this.#answered[sequence] = Date.now()
  }
}
