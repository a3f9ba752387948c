import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashShard, mix32 } from '../src/hash.js'

describe('hashShard', () => {
  it('spreads ids evenly over a power-of-two number of shards, stably', () => {
    const counts = new Array<number>(16).fill(0)
    for (let i = 0; i < 16_000; i++) counts[hashShard(`user-${i}`, 16)]!++
    for (const count of counts) expect(count).toBeGreaterThan(850)
    expect(hashShard('user-1', 16)).toBe(hashShard('user-1', 16))
  })
})

// A member's shard is chosen by each agent on its own and lives on in Redis: agents of different versions in one
// fleet must choose alike, so these outputs are pinned. They were taken from the mixer before it used the
// sketch's fmix32; a change here is a wire change, not a refactoring.
describe('mix32 outputs, pinned', () => {
  it.each([
    ['', 2872998923, 11],
    ['a', 444641715, 3],
    ['user-1', 2005895916, 12],
    ['product:12345', 3947082002, 2],
    ['{tag}:member', 568493937, 1],
    ['é€😀', 1546679087, 15],
    ['x'.repeat(200), 3644158961, 1],
  ])('hashes %j to %i (shard %i of 16)', (text, hash, shard) => {
    expect(mix32(text)).toBe(hash)
    expect(hashShard(text, 16)).toBe(shard)
  })

  it('hashes 100,000 members to the same values and shards as before', () => {
    const hashes = createHash('sha256')
    const shards = createHash('sha256')
    for (let i = 0; i < 100_000; i++) {
      hashes.update(`${mix32(`member:${i}`)},`)
      shards.update(`${hashShard(`member:${i}`, 64)},`)
    }
    expect(hashes.digest('hex')).toBe('9b63c7bfc606e3a838e649b94dffa05e427596f1ce10a8ecf0ff8264c14cd990')
    expect(shards.digest('hex')).toBe('1072ec0729bb6e5337360a141bb7549c036f9c64900e0a570b08b78d66bcd087')
  })
})
