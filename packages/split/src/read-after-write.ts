/**
 * Shares reads among writers that each need "a read that started after my write was acknowledged": a writer
 * joins a read that is queued but not yet sent, else queues one that starts when the read in flight (if any)
 * ends. So a key gets at most one read in flight and one queued per process, however many writes end at once.
 */
export class ReadAfterWrite<T> {
  readonly #running = new Map<string, Promise<T>>()
  readonly #queued = new Map<string, Promise<T>>()

  read(id: string, start: () => Promise<T>): Promise<T> {
    const queued = this.#queued.get(id)
    if (queued !== undefined) return queued
    const before = this.#running.get(id)
    const wait = before === undefined ? Promise.resolve() : before.then(noop, noop)
    const next = wait.then(() => {
      this.#queued.delete(id)
      const running = start()
      this.#running.set(id, running)
      const clear = () => {
        if (this.#running.get(id) === running) this.#running.delete(id)
      }
      running.then(clear, clear)
      return running
    })
    this.#queued.set(id, next)
    return next
  }
}

function noop(): void {}
