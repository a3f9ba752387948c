import { describe, expect, it } from 'vitest'
import { exactCounts, seededRandom, uniformStream, ZipfSampler, zipfStream } from '../src/index.js'

describe('seededRandom', () => {
  it('replays the same sequence for the same seed and differs across seeds', () => {
    const a = seededRandom(7)
    const b = seededRandom(7)
    const c = seededRandom(8)
    const seqA = Array.from({ length: 5 }, a)
    expect(Array.from({ length: 5 }, b)).toEqual(seqA)
    expect(Array.from({ length: 5 }, c)).not.toEqual(seqA)
    for (const x of seqA) expect(x >= 0 && x < 1).toBe(true)
  })
})

describe('ZipfSampler', () => {
  it('draws ranks with frequencies close to the power law', () => {
    const zipf = new ZipfSampler(1000, 1.1, seededRandom(3))
    const draws = 200_000
    const counts = new Array<number>(1000).fill(0)
    for (let i = 0; i < draws; i++) counts[zipf.next()]! += 1
    for (const rank of [0, 1, 9]) {
      const expected = zipf.probability(rank) * draws
      expect(Math.abs(counts[rank]! - expected)).toBeLessThan(expected * 0.05)
    }
    expect(counts[0]!).toBeGreaterThan(counts[1]!)
  })

  it('rejects nonsense parameters', () => {
    expect(() => new ZipfSampler(0, 1, Math.random)).toThrow(RangeError)
    expect(() => new ZipfSampler(10, 0, Math.random)).toThrow(RangeError)
  })
})

describe('streams', () => {
  it('a zipf stream concentrates traffic; a uniform one does not', () => {
    const zipf = exactCounts(zipfStream({ length: 100_000, keys: 10_000, s: 1.1, seed: 1 }))
    const uniform = exactCounts(uniformStream({ length: 100_000, keys: 10_000, seed: 1 }))
    expect(Math.max(...zipf.values())).toBeGreaterThan(5_000)
    expect(Math.max(...uniform.values())).toBeLessThan(40)
  })
})
