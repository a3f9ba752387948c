import { type Random, seededRandom, shuffle, ZipfSampler } from '@heatsink/workload'

/** The synthetic traffic the quickstart drives: a Zipf background, and one key that goes viral at a set time. */
export interface TrafficOptions {
  /** Background requests per second. */
  backgroundRps: number
  /** Extra requests per second for the viral key once it has gone viral. */
  viralRps: number
  viralKey: string
  /** Milliseconds after start when the viral key takes off. */
  viralAfterMs: number
  keys?: number
  seed?: number
}

/** Draws the keys requested in each slice of time; pure, so the demo's traffic is reproducible. */
export class Traffic {
  readonly #options: TrafficOptions
  readonly #names: string[]
  readonly #zipf: ZipfSampler
  readonly #random: Random

  constructor(options: TrafficOptions) {
    this.#options = options
    const keys = options.keys ?? 100_000
    this.#random = seededRandom(options.seed ?? 1)
    this.#names = shuffle(
      Array.from({ length: keys }, (_, i) => `product:${i}`),
      this.#random,
    )
    this.#zipf = new ZipfSampler(keys, 1.1, this.#random)
  }

  /** Calls `send` for every request due in the `sliceMs` that ends `elapsedMs` after start. */
  slice(elapsedMs: number, sliceMs: number, send: (key: string) => void): void {
    const background = Math.round((this.#options.backgroundRps * sliceMs) / 1000)
    for (let i = 0; i < background; i++) send(this.#names[this.#zipf.next()] as string)
    if (elapsedMs >= this.#options.viralAfterMs) {
      const viral = Math.round((this.#options.viralRps * sliceMs) / 1000)
      for (let i = 0; i < viral; i++) send(this.#options.viralKey)
    }
  }
}
