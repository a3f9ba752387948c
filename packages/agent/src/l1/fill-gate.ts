/** What a fill holds from when it starts: it may store only if neither number moved meanwhile. */
export interface FillTicket {
  readonly generation: number
  readonly epoch: number
}

/**
 * Which keys a cache may hold, and whether a fill may still store. Fills race with invalidations: a fill read
 * before a write can answer after the write's invalidation arrived. Every admitted key therefore has a
 * generation, bumped by each invalidation, and every channel loss bumps an epoch; a fill stores only if both
 * are unchanged when its answer arrives. Shared by the agent's caches so that the rule lives in one place.
 */
export class FillGate {
  readonly #generations = new Map<string, number>()
  #next = 0
  #epoch = 0
  #usable = false

  /** True while fills may start and store: every invalidation channel is live. */
  get usable(): boolean {
    return this.#usable
  }

  /** Allows `name` in (it became local_cache); admitting an admitted key changes nothing. */
  admit(name: string): void {
    if (!this.#generations.has(name)) this.#generations.set(name, ++this.#next)
  }

  admitted(name: string): boolean {
    return this.#generations.has(name)
  }

  /** Removes `name` for good; true when it was admitted. */
  retire(name: string): boolean {
    return this.#generations.delete(name)
  }

  /** `name` changed: fills of it in flight will not store. True when it is admitted. */
  bump(name: string): boolean {
    if (!this.#generations.has(name)) return false
    this.#generations.set(name, ++this.#next)
    return true
  }

  /** Everything changed (a flush). */
  bumpAll(): void {
    for (const name of this.#generations.keys()) this.#generations.set(name, ++this.#next)
  }

  /** Records whether every channel is live; true when this call lost them (the caller then empties itself). */
  setUsable(usable: boolean): boolean {
    if (usable === this.#usable) return false
    this.#usable = usable
    if (usable) return false
    this.#epoch++
    this.bumpAll()
    return true
  }

  /** A fill of `name` may start now: its ticket, or undefined (channels down, or not admitted). */
  ticket(name: string): FillTicket | undefined {
    const generation = this.#generations.get(name)
    if (!this.#usable || generation === undefined) return undefined
    return { generation, epoch: this.#epoch }
  }

  /** The fill that took `ticket` may store its answer. */
  stillValid(name: string, ticket: FillTicket): boolean {
    return this.#usable && this.#epoch === ticket.epoch && this.#generations.get(name) === ticket.generation
  }

  /** Forgets every key and stops fills (on close). */
  clear(): void {
    this.#usable = false
    this.#epoch++
    this.#generations.clear()
  }
}
