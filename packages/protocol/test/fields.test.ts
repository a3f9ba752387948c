import { describe, expect, it } from 'vitest'
import { AgentId, HotKeyStats, MAX_KEY_BYTES, RedisKey, RegistryEntry, SplitFactor } from '../src/index.js'
import { entry } from './fixtures.js'

describe('RedisKey', () => {
  it('accepts keys up to the byte limit', () => {
    expect(RedisKey.safeParse('k').success).toBe(true)
    expect(RedisKey.safeParse('k'.repeat(MAX_KEY_BYTES)).success).toBe(true)
    // 341 x '€' is 1023 bytes.
    expect(RedisKey.safeParse('€'.repeat(341)).success).toBe(true)
  })

  it('counts bytes, not characters', () => {
    const key = '€'.repeat(400) // 400 characters, 1200 bytes
    const result = RedisKey.safeParse(key)
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.message).toContain('1024 bytes')
    expect(RedisKey.safeParse('€'.repeat(342)).success).toBe(false) // 1026 bytes
    expect(RedisKey.safeParse('😀'.repeat(257)).success).toBe(false) // 514 code units, 1028 bytes
  })

  it('rejects an empty key and one a byte over the limit', () => {
    expect(RedisKey.safeParse('').success).toBe(false)
    expect(RedisKey.safeParse('k'.repeat(MAX_KEY_BYTES + 1)).success).toBe(false)
  })
})

describe('SplitFactor', () => {
  it.each([1, 2, 4, 512, 1024])('accepts %d', (n) => {
    expect(SplitFactor.safeParse(n).success).toBe(true)
  })

  it.each([0, 3, 6, 1000, 2048, -2, 2.5])('rejects %d', (n) => {
    expect(SplitFactor.safeParse(n).success).toBe(false)
  })

  it('defaults to 1 in a registry entry', () => {
    const { splitFactor: _, ...rest } = entry()
    expect(RegistryEntry.parse(rest).splitFactor).toBe(1)
  })
})

describe('AgentId', () => {
  it('accepts host-pid style ids and rejects whitespace and control characters', () => {
    expect(AgentId.safeParse('checkout-7f9c4d-2:1234').success).toBe(true)
    expect(AgentId.safeParse('a\nb').success).toBe(false)
    expect(AgentId.safeParse('a b').success).toBe(false)
    expect(AgentId.safeParse('').success).toBe(false)
  })

  it('takes 1 to 128 characters', () => {
    expect(AgentId.safeParse('a'.repeat(128)).success).toBe(true)
    expect(AgentId.safeParse('a'.repeat(129)).success).toBe(false)
    expect(AgentId.safeParse('').success).toBe(false)
  })
})

describe('HotKeyStats', () => {
  it('fills absent counters with 0', () => {
    expect(HotKeyStats.parse({ key: 'k', l1Hits: 5 })).toEqual({
      key: 'k',
      l1Hits: 5,
      l1Misses: 0,
      coalescedWaiters: 0,
      upstreamLoads: 0,
      staleServes: 0,
      leaseWaits: 0,
      timeouts: 0,
      misses: 0,
    })
  })

  it('rejects negative and fractional counters', () => {
    expect(HotKeyStats.safeParse({ key: 'k', timeouts: -1 }).success).toBe(false)
    expect(HotKeyStats.safeParse({ key: 'k', splitShardCounts: [1, 0.5] }).success).toBe(false)
  })
})
