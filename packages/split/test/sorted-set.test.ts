import type { Cluster, Redis } from 'ioredis'
import { expect, it } from 'vitest'
import type { Splitter } from '../src/index.js'
import { below, seeded } from './support/random.js'
import { describeTargets } from './support/targets.js'

// Compares every read of the split sorted set with the same read of a plain one.
async function expectSameReads(
  splitter: Splitter,
  key: string,
  n: number,
  plain: Redis | Cluster,
  model: string,
) {
  const card = await plain.zcard(model)
  expect(await splitter.zcard(key, n)).toBe(card)
  expect(await splitter.zrange(key, n, 0, -1, 'WITHSCORES')).toEqual(
    await plain.zrange(model, 0, -1, 'WITHSCORES'),
  )
  const ranges: Array<[number, number]> = [
    [0, 0],
    [0, 4],
    [2, 7],
    [5, 5],
    [-3, -1],
    [-100, 2],
    [3, -2],
    [card, card + 5],
    [4, 2],
  ]
  for (const [start, stop] of ranges) {
    expect(await splitter.zrange(key, n, start, stop)).toEqual(await plain.zrange(model, start, stop))
    expect(await splitter.zrevrange(key, n, start, stop, 'WITHSCORES')).toEqual(
      await plain.zrevrange(model, start, stop, 'WITHSCORES'),
    )
  }
}

describeTargets('split sorted set', (target) => {
  it('gives a member one home shard, so a lower score replaces a higher one', async () => {
    const t = target()
    const key = `${t.namespace}:board`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    expect(await splitter.zadd(key, 8, 50, 'alice', 70, 'bob')).toBe(2)
    expect(await splitter.zadd(key, 8, 10, 'alice')).toBe(0)
    expect(await splitter.zscore(key, 8, 'alice')).toBe('10')
    const holding = await Promise.all(
      splitter.layout(key, 8).shards.map((shard) => plain.zscore(shard.data, 'alice')),
    )
    expect(holding.filter((score) => score !== null)).toEqual(['10'])
    expect(await splitter.zrange(key, 8, 0, -1, 'WITHSCORES')).toEqual(['alice', '10', 'bob', '70'])
  })

  it('ranks a member written after the split above its entry in the base key', async () => {
    const t = target()
    const key = `${t.namespace}:scores`
    const plain = await t.client()
    await plain.zadd(key, 5, 'carol', 1, 'dave', 9, 'erin')
    const splitter = await t.splitter('agent-a')
    await splitter.zadd(key, 4, 3, 'carol', 12, 'frank')
    expect(await splitter.zscore(key, 4, 'carol')).toBe('3')
    expect(await splitter.zscore(key, 4, 'dave')).toBe('1')
    expect(await splitter.zcard(key, 4)).toBe(4)
    expect(await splitter.zrange(key, 4, 0, -1, 'WITHSCORES')).toEqual([
      'dave',
      '1',
      'carol',
      '3',
      'erin',
      '9',
      'frank',
      '12',
    ])
    expect(await splitter.zrevrange(key, 4, 0, 1)).toEqual(['frank', 'erin'])
    expect(await splitter.zrem(key, 4, 'carol', 'nobody')).toBe(1)
    expect(await plain.zscore(key, 'carol')).toBeNull()
    expect(await splitter.zscore(key, 4, 'carol')).toBeNull()
    expect(await splitter.zcard(key, 4)).toBe(3)
  })

  it('orders equal scores by member bytes, as Redis does, including non-ASCII members', async () => {
    const t = target()
    const key = `${t.namespace}:ties`
    const model = `${t.namespace}:ties-model`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    const members = ['b', 'a', 'B', 'ä', 'z', '\u{1F600}', '\uFF21', 'aa', '', '1', 'inf-member']
    const args = members.flatMap((member) => [7, member])
    await splitter.zadd(key, 8, ...args)
    await plain.zadd(model, ...args)
    await splitter.zadd(key, 8, 'inf', 'top', '-inf', 'bottom', 7.5, 'mid')
    await plain.zadd(model, 'inf', 'top', '-inf', 'bottom', 7.5, 'mid')
    await expectSameReads(splitter, key, 8, plain, model)
  })

  it('reads back exactly what a random sequence of writes leaves on a plain sorted set', async () => {
    const t = target()
    const key = `${t.namespace}:split`
    const model = `${t.namespace}:model`
    const plain = await t.client()
    const random = seeded(2024)
    const pool = Array.from({ length: 40 }, (_, i) => `player-${i}`)
    // The set held members before the split; many are written again (and so shadowed in the base key).
    const initial = pool.slice(0, 25).flatMap((member) => [below(random, 50), member])
    await plain.zadd(key, ...initial)
    await plain.zadd(model, ...initial)
    const splitter = await t.splitter('agent-a')
    for (let round = 0; round < 12; round++) {
      for (let op = 0; op < 12; op++) {
        const members = Array.from({ length: 1 + below(random, 3) }, () => pool[below(random, pool.length)]!)
        if (random() < 0.7) {
          const args = members.flatMap((member) => [below(random, 30) - 10, member])
          await splitter.zadd(key, 8, ...args)
          await plain.zadd(model, ...args)
        } else {
          expect(await splitter.zrem(key, 8, ...members)).toBe(await plain.zrem(model, ...new Set(members)))
        }
      }
      await expectSameReads(splitter, key, 8, plain, model)
      const probe = pool[below(random, pool.length)]!
      expect(await splitter.zscore(key, 8, probe)).toBe(await plain.zscore(model, probe))
    }
  })

  it('pages past base entries hidden by newer shard entries', async () => {
    const t = target()
    const key = `${t.namespace}:deep`
    const model = `${t.namespace}:deep-model`
    const plain = await t.client()
    const members = Array.from({ length: 120 }, (_, i) => `m${i}`)
    await plain.zadd(key, ...members.flatMap((member, i) => [i, member]))
    const splitter = await t.splitter('agent-a')
    // Every old low score is replaced by a high one: the base key's first 120 ranks are all hidden.
    await splitter.zadd(key, 4, ...members.flatMap((member, i) => [1000 + i, member]))
    await splitter.zadd(key, 4, 500, 'newcomer')
    await plain.zadd(model, ...members.flatMap((member, i) => [1000 + i, member]), 500, 'newcomer')
    expect(await splitter.zrange(key, 4, 0, 2)).toEqual(['newcomer', 'm0', 'm1'])
    await expectSameReads(splitter, key, 4, plain, model)
  })

  it('keeps every member 4 agents write concurrently', async () => {
    const t = target()
    const key = `${t.namespace}:race`
    const agents = await t.splitters(['a', 'b', 'c', 'd'])
    await Promise.all(
      agents.map(async (splitter, a) => {
        for (let i = 0; i < 200; i++) await splitter.zadd(key, 8, a * 1000 + i, `${a}:${i}`)
      }),
    )
    expect(await agents[0]!.zcard(key, 8)).toBe(800)
    const top = await agents[1]!.zrevrange(key, 8, 0, 2, 'WITHSCORES')
    expect(top).toEqual(['3:199', '3199', '3:198', '3198', '3:197', '3197'])
  })

  it('rejects a ZADD without score-member pairs', async () => {
    const splitter = await target().splitter('agent-a')
    await expect(splitter.zadd('k', 4, 1)).rejects.toThrow(RangeError)
  })
})
