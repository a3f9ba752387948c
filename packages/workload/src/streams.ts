import { seededRandom } from './random.js'
import { ZipfSampler } from './zipf.js'

/** Options shared by the stream builders. */
export interface StreamOptions {
  /** Requests in the stream. */
  length: number
  /** Distinct keys the stream draws from. */
  keys: number
  seed?: number
  /** Names key i; the default looks like real cache keys (`product:12345`). */
  keyName?: (i: number) => string
}

const productKey = (i: number): string => `product:${i}`

/** Builds key names once, so that generating a stream allocates no strings per request. */
export function keyNames(keys: number, keyName: (i: number) => string = productKey): string[] {
  return Array.from({ length: keys }, (_, i) => keyName(i))
}

/** A Zipf(s) stream: a few keys take most requests, as in real traffic. Ranks are shuffled over key names. */
export function zipfStream(options: StreamOptions & { s: number }): string[] {
  const random = seededRandom(options.seed ?? 1)
  const names = shuffle(keyNames(options.keys, options.keyName), random)
  const zipf = new ZipfSampler(options.keys, options.s, random)
  const out = new Array<string>(options.length)
  for (let i = 0; i < options.length; i++) out[i] = names[zipf.next()] as string
  return out
}

/** A uniform stream: every key equally likely, so no key is hot. */
export function uniformStream(options: StreamOptions): string[] {
  const random = seededRandom(options.seed ?? 1)
  const names = keyNames(options.keys, options.keyName)
  const out = new Array<string>(options.length)
  for (let i = 0; i < options.length; i++) out[i] = names[Math.floor(random() * options.keys)] as string
  return out
}

/** Counts each key exactly, the ground truth that sketch estimates are checked against. */
export function exactCounts(stream: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const key of stream) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

/** Fisher-Yates in place with the given generator; returns the array. */
export function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const tmp = items[i] as T
    items[i] = items[j] as T
    items[j] = tmp
  }
  return items
}
