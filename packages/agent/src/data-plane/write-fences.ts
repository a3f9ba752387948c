import type { Route } from './route.js'

/**
 * This process's writes to registered keys while they are in flight. A key with one is fenced: no read of it is
 * filled from the tracking connection or joins another read's round trip, since either could overtake the write;
 * reads queue behind it on the client's own connection, so a process always reads its own writes. When a write
 * is answered, L1 forgets the key again (a fill may have read the old value meanwhile), the fence lifts, and
 * every other agent is told.
 */
export class WriteFences {
  /** Fenced keys, and how many of this process's writes to each are in flight. */
  readonly #writing = new Map<string, number>()
  readonly #invalidate: (name: string) => void
  readonly #publish: (names: string[]) => void
  readonly #answered: (name: string) => void

  /** `answered` hears of each write lifted, for what must follow a write of this process (replica_read). */
  constructor(
    invalidate: (name: string) => void,
    publish: (names: string[]) => void,
    answered: (name: string) => void = () => {},
  ) {
    this.#invalidate = invalidate
    this.#publish = publish
    this.#answered = answered
  }

  /** Whether a write of this process to `name` is in flight. */
  has(name: string): boolean {
    return this.#writing.has(name)
  }

  /** A write to `name` is about to be sent (or queued in MULTI). */
  raise(name: string): void {
    this.#writing.set(name, (this.#writing.get(name) ?? 0) + 1)
  }

  /** The route of a write to `names`: sent as it is, its fences lifted once answered. */
  sendThenLift(names: string[]): Route {
    return {
      kind: 'send',
      settle: (error, reply) => {
        this.lift(names)
        return error ?? reply
      },
    }
  }

  /** `pending`, a write carried out by the core itself (a split key's), with its fences lifted once settled. */
  liftAfter(names: string[], pending: Promise<unknown>): Promise<unknown> {
    return pending.then(
      (reply) => {
        this.lift(names)
        return reply
      },
      (error: unknown) => {
        this.lift(names)
        throw error
      },
    )
  }

  /** The writes to `names` were answered (or will never run). */
  lift(names: string[]): void {
    for (const name of names) {
      this.#invalidate(name)
      this.#answered(name)
      const count = (this.#writing.get(name) ?? 1) - 1
      if (count === 0) this.#writing.delete(name)
      else this.#writing.set(name, count)
    }
    this.#publish(names)
  }
}
