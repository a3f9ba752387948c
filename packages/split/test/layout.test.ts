import { createNames, redisClusterSlot } from '@heatsink/protocol'
import { describe, expect, it } from 'vitest'
import { computeLayout, shardSlot } from '../src/index.js'
import { below, seeded } from './support/random.js'

describe('layout', () => {
  const names = createNames('hs')
  // The ranges `redis-cli --cluster create` gives three masters.
  const master = (slot: number) => (slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2)

  it('names n shards on n distinct slots, each shard and its gate in the same one, spaced 16384 / n apart', () => {
    for (const n of [2, 4, 8, 64, 1024]) {
      const layout = computeLayout(names, 'likes:post:9001', n)
      expect(layout.shards).toHaveLength(n)
      expect(new Set(layout.shards.map((shard) => shard.slot)).size).toBe(n)
      for (const shard of layout.shards) {
        expect(redisClusterSlot(shard.data)).toBe(shard.slot)
        expect(redisClusterSlot(shard.gate)).toBe(shard.slot)
        expect(shard.slot).toBe(shardSlot('likes:post:9001', n, shard.index))
      }
    }
    expect(computeLayout(names, 'k', 1).shards).toHaveLength(0)
  })

  it('spreads every key over the masters of a default three-master cluster in proportion', () => {
    const random = seeded(11)
    for (let k = 0; k < 2000; k++) {
      const key = `key:${below(random, 1e9)}${k % 7 === 0 ? `:{tag${k}}` : ''}`
      for (const n of [2, 4, 8, 16, 32]) {
        const counts = [0, 0, 0]
        for (const shard of computeLayout(names, key, n).shards) counts[master(shard.slot)]!++
        expect(Math.max(...counts)).toBe(Math.ceil(n / 3))
        expect(counts.filter((count) => count > 0)).toHaveLength(Math.min(n, 3))
      }
    }
  })
})
