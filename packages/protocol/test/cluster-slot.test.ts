import { describe, expect, it } from 'vitest'
import { CLUSTER_SLOTS, redisClusterSlot } from '../src/index.js'

// Expected values cross-checked with CRC16/XMODEM from Python's binascii.crc_hqx(data, 0) % 16384.
describe('redisClusterSlot', () => {
  it.each([
    ['foo', 12182],
    ['bar', 5061],
    ['hello', 866],
    ['somekey', 11058],
    ['123456789', 12739],
    ['', 0],
    ['€uro', 997],
  ])('puts %j in slot %i', (key, slot) => {
    expect(redisClusterSlot(key)).toBe(slot)
  })

  it('hashes only the hash tag when there is one', () => {
    expect(redisClusterSlot('{user1000}.following')).toBe(3443)
    expect(redisClusterSlot('{user1000}.followers')).toBe(3443)
    expect(redisClusterSlot('user1000')).toBe(3443)
    expect(redisClusterSlot('foo{bar}{zap}')).toBe(redisClusterSlot('bar'))
  })

  it('hashes the whole key when the first tag is empty', () => {
    expect(redisClusterSlot('foo{}{bar}')).toBe(8363)
    expect(redisClusterSlot('foo{}{bar}')).not.toBe(redisClusterSlot('bar'))
    expect(redisClusterSlot('{}')).toBe(15257)
  })

  it('takes the tag up to the first closing brace after the first opening one', () => {
    expect(redisClusterSlot('foo{{bar}}zap')).toBe(redisClusterSlot('{bar'))
    expect(redisClusterSlot('foo{{bar}}zap')).toBe(4015)
  })

  it('hashes the whole key when a brace is unmatched', () => {
    expect(redisClusterSlot('{')).toBe(4092)
    expect(redisClusterSlot('}')).toBe(12090)
    expect(redisClusterSlot('a{b')).toBe(13340)
    expect(redisClusterSlot('}a{b')).not.toBe(redisClusterSlot('a'))
  })

  it('always returns a slot in range', () => {
    for (let i = 0; i < 1000; i++) {
      const slot = redisClusterSlot(`key:${i}`)
      expect(slot).toBeGreaterThanOrEqual(0)
      expect(slot).toBeLessThan(CLUSTER_SLOTS)
    }
  })
})
