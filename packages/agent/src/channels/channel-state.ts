/** Whether one invalidation channel (or a set of them) is live, with listeners told of every change. */
export class ChannelState {
  #up = false
  readonly #listeners: Array<(up: boolean) => void> = []

  get up(): boolean {
    return this.#up
  }

  set(up: boolean): void {
    if (up === this.#up) return
    this.#up = up
    for (const listener of this.#listeners) listener(up)
  }

  watch(listener: (up: boolean) => void): void {
    this.#listeners.push(listener)
  }
}
