import { describe, expect, it } from 'vitest'
import { CountMinSketch, InvalidSketchOptionError, SketchMismatchError } from '../src/index.js'
import { KeyHasher } from '../src/key-hasher.js'

describe('CountMinSketch', () => {
  it('counts exactly when keys do not collide, and never underestimates', () => {
    const sketch = new CountMinSketch()
    for (let i = 0; i < 5; i++) sketch.add('product:1')
    sketch.add('product:2', 3)
    expect(sketch.estimate('product:1')).toBe(5)
    expect(sketch.estimate('product:2')).toBe(3)
    expect(sketch.estimate('product:3')).toBe(0)
    expect(sketch.total).toBe(8)
  })

  it('gives each row an independent hash: distinct keys almost never share every cell', () => {
    // With rows derived as (h1 + j*h2) & mask, some key pairs share all four cells; independent rows make that
    // about width^-depth per pair.
    const sketch = new CountMinSketch({ depth: 4, width: 2048 })
    const cells = new Uint32Array(4)
    const seen = new Set<string>()
    let fullCollisions = 0
    for (let i = 0; i < 200_000; i++) {
      const id = sketch.cellsOf(`product:${i}`, cells).join(',')
      if (seen.has(id)) fullCollisions++
      seen.add(id)
    }
    expect(fullCollisions).toBe(0)
  })

  it('counts a request by fingerprint (addAt) in the cells it places the key in, whatever its shape', () => {
    // The default shape (rows cut from the fingerprint's lanes, counted in place), one with a third row per lane,
    // and one too deep to cut (each row mixes its own): addAt must count where cellsOf and estimate look.
    for (const options of [{}, { depth: 3, width: 1024 }, { depth: 6, width: 2048 }]) {
      const byKey = new CountMinSketch(options)
      const byFingerprint = new CountMinSketch(options)
      const hasher = new KeyHasher(byKey.seed)
      for (let i = 0; i < 5_000; i++) {
        const key = `user:${i % 1_700}:${'x'.repeat(i % 40)}`
        byKey.add(key)
        hasher.hash(key)
        expect(byFingerprint.addAt(hasher.h1, hasher.h2)).toBe(byKey.estimate(key))
      }
      expect(byFingerprint.toCells()).toEqual(byKey.toCells())
      expect(byFingerprint.total).toBe(5_000)
    }
  })

  it('spreads keys evenly over each row', () => {
    const sketch = new CountMinSketch({ depth: 4, width: 256 })
    const cells = new Uint32Array(4)
    const load = new Uint32Array(4 * 256)
    for (let i = 0; i < 256_000; i++) for (const c of sketch.cellsOf(`user:${i}`, cells)) load[c]! += 1
    // 1,000 keys expected per cell; a fair hash keeps every cell within 20% of that.
    for (const n of load) expect(Math.abs(n - 1000)).toBeLessThan(200)
  })

  it('merges sketches of the same dimensions and seed cell by cell', () => {
    const a = new CountMinSketch({ seed: 9 })
    const b = new CountMinSketch({ seed: 9 })
    a.add('k', 4)
    b.add('k', 6)
    b.add('other', 2)
    a.merge(b)
    expect(a.estimate('k')).toBe(10)
    expect(a.estimate('other')).toBe(2)
    expect(a.total).toBe(12)
  })

  it('refuses to merge sketches whose cells mean different things', () => {
    const a = new CountMinSketch({ seed: 1 })
    expect(() => a.merge(new CountMinSketch({ seed: 2 }))).toThrow(SketchMismatchError)
    expect(() => a.merge(new CountMinSketch({ seed: 1, width: 1024 }))).toThrow(/1024/)
    expect(() => a.merge(new CountMinSketch({ seed: 1, depth: 3 }))).toThrow(SketchMismatchError)
  })

  it('round-trips through its cells', () => {
    const a = new CountMinSketch({ width: 64 })
    a.add('x', 7)
    const b = CountMinSketch.fromCells(a.toCells(), a.total, { width: 64 })
    expect(b.estimate('x')).toBe(7)
    expect(() => CountMinSketch.fromCells(new Uint32Array(3), 0, { width: 64 })).toThrow(SketchMismatchError)
  })

  it('clears for the next window', () => {
    const sketch = new CountMinSketch()
    sketch.add('k', 5)
    sketch.clear()
    expect(sketch.estimate('k')).toBe(0)
    expect(sketch.total).toBe(0)
  })

  it('rejects bad dimensions with the option named', () => {
    expect(() => new CountMinSketch({ width: 1000 })).toThrow(InvalidSketchOptionError)
    expect(() => new CountMinSketch({ width: 1000 })).toThrow(/width/)
    expect(() => new CountMinSketch({ depth: 0 })).toThrow(/depth/)
  })
})
