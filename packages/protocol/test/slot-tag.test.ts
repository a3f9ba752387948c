import { describe, expect, it } from 'vitest'
import { createNames, redisClusterSlot, sameSlotTag, slotTag } from '../src/index.js'

describe('slotTag', () => {
  it('gives, for every slot, a short tag that hashes to it', () => {
    for (const slot of [0, 1, 5061, 12182, 16383]) {
      const tag = slotTag(slot)
      expect(tag.length).toBeLessThanOrEqual(4)
      expect(redisClusterSlot(`anything:{${tag}}:rest`)).toBe(slot)
    }
    let longest = 0
    for (let slot = 0; slot < 16384; slot++) longest = Math.max(longest, slotTag(slot).length)
    expect(longest).toBeLessThanOrEqual(4)
  })

  it('rejects slots outside the cluster', () => {
    expect(() => slotTag(16384)).toThrow(RangeError)
    expect(() => slotTag(-1)).toThrow(RangeError)
  })

  it("puts a lease key in its cache key's slot, whatever braces the cache key holds", () => {
    const names = createNames('hs')
    for (const key of ['product:1', 'user:{42}:profile', 'odd}key{', '{}empty', 'ключ', '{a}{b}']) {
      expect(redisClusterSlot(names.leaseKey(key))).toBe(redisClusterSlot(key))
      expect(names.leaseKey(key).startsWith('hs:lease:')).toBe(true)
      expect(sameSlotTag(key)).toMatch(/^\{[0-9a-z]+\}$/)
    }
  })
})
