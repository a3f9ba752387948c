/** One read in flight that later identical reads share: its reply, or the error Redis answered with. */
interface Flight {
  readonly reply: Promise<unknown>
  settle(error: Error | null, reply: unknown): void
}

/**
 * Identical reads (same key, command and arguments) of a coalesce key in flight at once share one round trip:
 * the first is sent, later ones wait for its reply. A write to the key, or any invalidation, ends the sharing
 * at once, so a read issued after a write never gets a reply that Redis produced before it.
 */
export class ReplyFlights {
  readonly #flights = new Map<string, Map<string, Flight>>()

  /** The reply of the identical read in flight, or undefined when there is none. */
  join(name: string, signature: string): Promise<unknown> | undefined {
    return this.#flights.get(name)?.get(signature)?.reply
  }

  /** Starts a shared read; call the returned function with the sent read's outcome. */
  start(name: string, signature: string): (error: Error | null, reply: unknown) => void {
    let resolve!: (reply: unknown) => void
    let reject!: (error: Error) => void
    const reply = new Promise<unknown>((res, rej) => {
      resolve = res
      reject = rej
    })
    // Nobody may be waiting: an unobserved rejection must not surface as unhandled.
    reply.catch(() => {})
    const flight: Flight = {
      reply,
      settle: (error, value) => (error === null ? resolve(value) : reject(error)),
    }
    let flights = this.#flights.get(name)
    if (flights === undefined) {
      flights = new Map()
      this.#flights.set(name, flights)
    }
    flights.set(signature, flight)
    return (error, value) => {
      const current = this.#flights.get(name)
      if (current?.get(signature) === flight) {
        current.delete(signature)
        if (current.size === 0) this.#flights.delete(name)
      }
      flight.settle(error, value)
    }
  }

  /** Later reads of `name` start anew (its value changed); reads already waiting still get their reply. */
  detach(name: string): void {
    this.#flights.delete(name)
  }

  detachAll(): void {
    this.#flights.clear()
  }
}
