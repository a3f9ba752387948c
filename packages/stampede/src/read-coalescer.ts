import type { Cluster, Redis } from 'ioredis'
import { Generations } from './generations.js'

interface Read<T> {
  ticket: number
  promise: Promise<T>
}

/**
 * Single flight for plain reads: identical reads of one key in flight at once share one round trip, so a herd
 * of misses on a hot key becomes one Redis read per process. A read in flight when the key is written or
 * invalidated is not joined by later callers (they would read what was there before the write).
 */
export class ReadCoalescer<T> {
  readonly #read: (key: string) => Promise<T>
  readonly #generations: Generations
  readonly #inflight = new Map<string, Read<T>>()
  #joined = 0

  constructor(read: (key: string) => Promise<T>, generations: Generations = new Generations()) {
    this.#read = read
    this.#generations = generations
  }

  /** Reads that shared another caller's round trip, since the last takeJoined(). */
  takeJoined(): number {
    const joined = this.#joined
    this.#joined = 0
    return joined
  }

  /** Reads `key`, joining an identical read in flight. */
  get(key: string): Promise<T> {
    const running = this.#inflight.get(key)
    if (running !== undefined && this.#generations.isCurrent(key, running.ticket)) {
      this.#joined++
      return running.promise
    }
    const read: Read<T> = { ticket: this.#generations.ticket(), promise: this.#read(key) }
    this.#inflight.set(key, read)
    const done = () => {
      if (this.#inflight.get(key) === read) this.#inflight.delete(key)
    }
    read.promise.then(done, done)
    return read.promise
  }

  /** Later reads of `key` start their own round trip (call after a write or an invalidation). */
  invalidate(key: string): void {
    this.#generations.bump(key)
  }
}

/**
 * Coalesced GETs on `redis`. Pass the guard's `generations` so that guard.invalidate(key) also detaches reads
 * in flight; with none, call invalidate(key) on the coalescer after every write.
 */
export function coalesceReads(
  redis: Redis | Cluster,
  generations?: Generations,
): ReadCoalescer<string | null> {
  return new ReadCoalescer((key) => redis.get(key), generations)
}
