import { seededRandom } from '@heatsink/workload'
import { describe, expect, it } from 'vitest'
import { missSampleWeight } from '../src/data-plane/miss-sampling.js'

describe('missSampleWeight', () => {
  it('watches every reply of a key read fewer than 64 times, and none of an untracked key', () => {
    expect(missSampleWeight(0)).toBe(0)
    for (let reads = 1; reads < 64; reads++) expect(missSampleWeight(reads)).toBe(1)
  })

  it('watches ever fewer replies, down to one in 64, each weighing the reads since the last', () => {
    let watched = 0
    let weights = 0
    let largestGap = 0
    for (let reads = 1; reads <= 200_000; reads++) {
      const weight = missSampleWeight(reads)
      if (weight === 0) continue
      watched++
      weights += weight
      // A watched reply's weight covers exactly the reads since the last watched one.
      if (weights !== reads) throw new Error(`weights add up to ${weights} at read ${reads}`)
      largestGap = Math.max(largestGap, weight)
    }
    expect(largestGap).toBe(64)
    // 63 all watched, then 32 in each doubling from 64 to 2,048 reads, then every 64th read.
    expect(watched).toBe(63 + 32 * 5 + (200_000 - 2_048) / 64 + 1)
  })

  it('estimates a miss share within a few points from the replies it watches', () => {
    // A key read 100,000 times in a window: one read in ten misses at random, and every read misses during a
    // burst late in the window (the key expired and the application is reloading it).
    for (let seed = 1; seed <= 20; seed++) {
      const random = seededRandom(seed)
      const misses = (read: number) => random() < 0.1 || (read > 90_000 && read <= 95_000)
      let estimated = 0
      let actual = 0
      for (let read = 1; read <= 100_000; read++) {
        if (!misses(read)) continue
        actual++
        estimated += missSampleWeight(read)
      }
      expect(Math.abs(estimated - actual) / 100_000).toBeLessThan(0.03)
    }
  })
})
