import type { Candidate } from './candidate.js'

/**
 * Finds a candidate by its 64-bit fingerprint: open addressing with linear probing over typed arrays, so a
 * lookup touches a few adjacent words and no string. Sized to stay at most half full; it doubles when candidates
 * beyond the usual capacity must be tracked.
 */
export class CandidateIndex {
  #mask: number
  #h1: Int32Array
  #h2: Int32Array
  #slots: Array<Candidate | undefined>
  #size = 0

  constructor(expected: number) {
    const length = nextPowerOfTwo(Math.max(16, expected * 2))
    this.#mask = length - 1
    this.#h1 = new Int32Array(length)
    this.#h2 = new Int32Array(length)
    this.#slots = new Array(length).fill(undefined)
  }

  get size(): number {
    return this.#size
  }

  get(h1: number, h2: number): Candidate | undefined {
    const mask = this.#mask
    const slots = this.#slots
    for (let slot = h1 & mask; ; slot = (slot + 1) & mask) {
      const candidate = slots[slot]
      if (candidate === undefined) return undefined
      if (this.#h1[slot] === h1 && this.#h2[slot] === h2) return candidate
    }
  }

  /** Adds a candidate under its fingerprint; the caller guarantees it is not already present. */
  add(candidate: Candidate): void {
    if ((this.#size + 1) * 2 > this.#slots.length) this.#grow()
    this.#place(candidate)
    this.#size++
  }

  delete(candidate: Candidate): void {
    const mask = this.#mask
    const slots = this.#slots
    let slot = candidate.h1 & mask
    while (slots[slot] !== candidate) {
      if (slots[slot] === undefined) return
      slot = (slot + 1) & mask
    }
    // Backward-shift deletion: pull later entries of the probe run into the gap, so lookups never need tombstones.
    let gap = slot
    for (let next = (gap + 1) & mask; ; next = (next + 1) & mask) {
      const moving = slots[next]
      if (moving === undefined) break
      const home = moving.h1 & mask
      const distanceFromHome = (next - home) & mask
      const distanceToGap = (next - gap) & mask
      if (distanceFromHome >= distanceToGap) {
        slots[gap] = moving
        this.#h1[gap] = this.#h1[next] as number
        this.#h2[gap] = this.#h2[next] as number
        gap = next
      }
    }
    slots[gap] = undefined
    this.#size--
  }

  clear(): void {
    this.#slots.fill(undefined)
    this.#size = 0
  }

  #place(candidate: Candidate): void {
    const mask = this.#mask
    let slot = candidate.h1 & mask
    while (this.#slots[slot] !== undefined) slot = (slot + 1) & mask
    this.#slots[slot] = candidate
    this.#h1[slot] = candidate.h1
    this.#h2[slot] = candidate.h2
  }

  #grow(): void {
    const old = this.#slots
    const length = old.length * 2
    this.#mask = length - 1
    this.#h1 = new Int32Array(length)
    this.#h2 = new Int32Array(length)
    this.#slots = new Array(length).fill(undefined)
    for (const candidate of old) if (candidate !== undefined) this.#place(candidate)
  }
}

function nextPowerOfTwo(n: number): number {
  let p = 1
  while (p < n) p *= 2
  return p
}
