import { describe, expect, it } from 'vitest'
import { hashShard } from '../src/hash.js'

describe('hashShard', () => {
  it('spreads ids evenly over a power-of-two number of shards, stably', () => {
    const counts = new Array<number>(16).fill(0)
    for (let i = 0; i < 16_000; i++) counts[hashShard(`user-${i}`, 16)]!++
    for (const count of counts) expect(count).toBeGreaterThan(850)
    expect(hashShard('user-1', 16)).toBe(hashShard('user-1', 16))
  })
})
