// Enough for the last few dozen log lines, which is where a server says why it would not start.
const DEFAULT_LIMIT = 16_384

/** Keeps the last `limit` characters written to it, so a long-lived server's log cannot grow memory. */
export class OutputTail {
  #text = ''
  readonly #limit: number

  constructor(limit = DEFAULT_LIMIT) {
    this.#limit = limit
  }

  /** Appends a chunk, dropping the oldest text beyond the limit. */
  append(chunk: Buffer | string): void {
    this.#text += chunk.toString()
    if (this.#text.length > this.#limit) this.#text = this.#text.slice(-this.#limit)
  }

  /** Everything kept so far. */
  toString(): string {
    return this.#text
  }
}
