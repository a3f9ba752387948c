import { describe, expect, it } from 'vitest'
import { CountMinSketch } from '../src/index.js'
import { KeyHasher } from '../src/key-hasher.js'

function fingerprint(hasher: KeyHasher, key: string): string {
  hasher.hash(key)
  return `${hasher.h1},${hasher.h2}`
}

// Keys of both paths: shorter than 24 characters (hashed by UTF-16 unit) and longer (by UTF-8 byte).
const SHORT = 'user:12345:profile'
const LONG = 'bench-front-door-pass-through-1a2b3c4d:item:1234'

describe('KeyHasher', () => {
  it('gives a key the same fingerprint whatever its string is built from', () => {
    const hasher = new KeyHasher(7)
    for (const key of [SHORT, LONG]) {
      const half = key.length >> 1
      const built = `${key.slice(0, half)}${key.slice(half)}`
      const parsed = JSON.parse(JSON.stringify(key)) as string
      const sliced = `#${key}#`.slice(1, -1)
      const expected = fingerprint(hasher, key)
      for (const same of [built, parsed, sliced]) expect(fingerprint(hasher, same)).toBe(expected)
    }
  })

  it('tells apart keys that differ in any one character, at any position, on both paths', () => {
    const hasher = new KeyHasher(7)
    for (const key of [SHORT, LONG, 'x'.repeat(1500)]) {
      const seen = new Set([fingerprint(hasher, key)])
      for (let i = 0; i < key.length; i++) {
        for (const replacement of ['0', 'é', '😀']) {
          const changed = key.slice(0, i) + replacement + key.slice(i + 1)
          if (changed === key) continue
          const print = fingerprint(hasher, changed)
          expect(seen.has(print), `${key.length}-character key changed at ${i} to ${replacement}`).toBe(false)
          seen.add(print)
        }
      }
    }
  })

  it('tells a long key from the same key with trailing zero bytes, which pad its last word', () => {
    const hasher = new KeyHasher(7)
    const prints = new Set(
      ['', '\0', '\0\0', '\0\0\0', '\0\0\0\0'].map((tail) => fingerprint(hasher, LONG + tail)),
    )
    expect(prints.size).toBe(5)
  })

  it('hashes keys longer than its buffer, and depends on its seed', () => {
    const key = `${'k'.repeat(3000)}ü`
    expect(fingerprint(new KeyHasher(7), key)).toBe(fingerprint(new KeyHasher(7), key))
    expect(fingerprint(new KeyHasher(7), key)).not.toBe(fingerprint(new KeyHasher(7), key.slice(0, -1)))
    expect(fingerprint(new KeyHasher(7), LONG)).not.toBe(fingerprint(new KeyHasher(8), LONG))
  })

  it('spreads long keys evenly over each row, and gives each its own fingerprint', () => {
    const sketch = new CountMinSketch({ depth: 4, width: 256 })
    const hasher = new KeyHasher(7)
    const cells = new Uint32Array(4)
    const load = new Uint32Array(4 * 256)
    const prints = new Set<string>()
    for (let i = 0; i < 256_000; i++) {
      const key = `tenant-42:session:${i}:shopping-cart`
      for (const c of sketch.cellsOf(key, cells)) load[c]! += 1
      prints.add(fingerprint(hasher, key))
    }
    // 1,000 keys expected per cell; a fair hash keeps every cell within 20% of that.
    for (const n of load) expect(Math.abs(n - 1000)).toBeLessThan(200)
    // 64 bits for 256,000 keys: a collision is a one in 500 million chance.
    expect(prints.size).toBe(256_000)
  })
})
