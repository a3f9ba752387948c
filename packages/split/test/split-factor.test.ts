import { MAX_SPLIT_FACTOR } from '@heatsink/protocol'
import { describe, expect, it } from 'vitest'
import { assertSplitFactor, isSplitFactor, splitFactorFor } from '../src/index.js'

describe('splitFactorFor', () => {
  it('is the write rate over the per-node capacity, rounded up to a power of two', () => {
    const options = { perNodeWriteCapacity: 10_000 }
    expect(splitFactorFor(0, options)).toBe(1)
    expect(splitFactorFor(9_999, options)).toBe(1)
    expect(splitFactorFor(10_000, options)).toBe(1)
    expect(splitFactorFor(10_001, options)).toBe(2)
    expect(splitFactorFor(30_000, options)).toBe(4)
    expect(splitFactorFor(40_000, options)).toBe(4)
    expect(splitFactorFor(40_001, options)).toBe(8)
    expect(splitFactorFor(1e12, options)).toBe(MAX_SPLIT_FACTOR)
  })

  it('caps at the largest power of two not above max', () => {
    expect(splitFactorFor(1e9, { perNodeWriteCapacity: 1, max: 64 })).toBe(64)
    expect(splitFactorFor(1e9, { perNodeWriteCapacity: 1, max: 100 })).toBe(64)
    expect(splitFactorFor(3, { perNodeWriteCapacity: 1, max: 1 })).toBe(1)
  })

  it.each([
    [-1, 1, undefined],
    [Number.NaN, 1, undefined],
    [10, 0, undefined],
    [10, 1, 0],
    [10, 1, 2.5],
  ])('rejects rate %d, capacity %d, max %s', (rate, capacity, max) => {
    expect(() =>
      splitFactorFor(
        rate,
        max === undefined ? { perNodeWriteCapacity: capacity } : { perNodeWriteCapacity: capacity, max },
      ),
    ).toThrow(expect.objectContaining({ code: 'E_SPLIT_OPTION' }))
  })

  it('accepts exactly the powers of two from 1 to MAX_SPLIT_FACTOR as split factors', () => {
    for (let n = 1; n <= MAX_SPLIT_FACTOR; n *= 2) expect(isSplitFactor(n)).toBe(true)
    for (const n of [0, 3, 12, 2048, -2, 1.5, '4', undefined]) expect(isSplitFactor(n)).toBe(false)
    expect(() => assertSplitFactor(6)).toThrow(expect.objectContaining({ code: 'E_SPLIT_FACTOR' }))
  })
})
