import { expect, it } from 'vitest'
import { below, seeded } from './support/random.js'
import { describeTargets } from './support/targets.js'

const sorted = (members: string[]) => [...members].sort()

describeTargets('split set', (target) => {
  it('answers over the union of the base key and every shard, and removes from all of them', async () => {
    const t = target()
    const key = `${t.namespace}:tags`
    const plain = await t.client()
    await plain.sadd(key, 'old-1', 'old-2', 'shared')
    const splitter = await t.splitter('agent-a')
    // The same member added many times lands in several shards; the union still counts it once.
    for (let i = 0; i < 40; i++) await splitter.sadd(key, 8, 'shared', `m${i % 10}`)
    const shardsHolding = await Promise.all(
      splitter.layout(key, 8).shards.map((shard) => plain.sismember(shard.data, 'shared')),
    )
    expect(shardsHolding.filter((flag) => flag === 1).length).toBeGreaterThan(1)
    const expected = ['old-1', 'old-2', 'shared', ...Array.from({ length: 10 }, (_, i) => `m${i}`)]
    expect(sorted(await splitter.smembers(key, 8))).toEqual(sorted(expected))
    expect(await splitter.scard(key, 8)).toBe(13)
    expect(await splitter.sismember(key, 8, 'old-1')).toBe(1)
    expect(await splitter.sismember(key, 8, 'm3')).toBe(1)
    expect(await splitter.sismember(key, 8, 'absent')).toBe(0)

    expect(await splitter.srem(key, 8, 'shared', 'old-1', 'm3', 'absent', 'm3')).toBe(3)
    expect(await splitter.sismember(key, 8, 'shared')).toBe(0)
    expect(await plain.sismember(key, 'shared')).toBe(0)
    for (const shard of splitter.layout(key, 8).shards)
      expect(await plain.sismember(shard.data, 'shared')).toBe(0)
    expect(await splitter.scard(key, 8)).toBe(10)
  })

  it('reads back exactly what a random sequence of adds and removes leaves on a plain set', async () => {
    const t = target()
    const key = `${t.namespace}:split`
    const model = `${t.namespace}:model`
    const plain = await t.client()
    const pool = Array.from({ length: 30 }, (_, i) => `member-${i}`)
    await plain.sadd(key, ...pool.slice(0, 8))
    await plain.sadd(model, ...pool.slice(0, 8))
    const splitter = await t.splitter('agent-a', { random: seeded(7) })
    const random = seeded(42)
    for (let round = 0; round < 20; round++) {
      for (let op = 0; op < 15; op++) {
        const members = Array.from({ length: 1 + below(random, 3) }, () => pool[below(random, pool.length)]!)
        if (random() < 0.6) {
          await splitter.sadd(key, 4, ...members)
          await plain.sadd(model, ...members)
        } else {
          expect(await splitter.srem(key, 4, ...members)).toBe(await plain.srem(model, ...members))
        }
      }
      expect(sorted(await splitter.smembers(key, 4))).toEqual(sorted(await plain.smembers(model)))
      expect(await splitter.scard(key, 4)).toBe(await plain.scard(model))
      const probe = pool[below(random, pool.length)]!
      expect(await splitter.sismember(key, 4, probe)).toBe(await plain.sismember(model, probe))
    }
  })

  it('keeps every member 4 agents add concurrently, minus the ones they remove', async () => {
    const t = target()
    const key = `${t.namespace}:followers`
    const agents = await t.splitters(['a', 'b', 'c', 'd'])
    await Promise.all(
      agents.map(async (splitter, a) => {
        for (let i = 0; i < 250; i++) await splitter.sadd(key, 8, `${a}:${i}`)
        // Each agent removes another agent's multiples of 10, which are added already or concurrently.
        for (let i = 0; i < 250; i += 10) await splitter.srem(key, 8, `${(a + 1) % 4}:${i}`)
      }),
    )
    // Removals raced the other agents' adds; settle them now that every add is acknowledged.
    for (let a = 0; a < 4; a++) for (let i = 0; i < 250; i += 10) await agents[0]!.srem(key, 8, `${a}:${i}`)
    const members = await agents[3]!.smembers(key, 8)
    expect(members).toHaveLength(4 * 225)
    expect(new Set(members).size).toBe(900)
    expect(members.some((member) => member.endsWith(':0') || member.endsWith(':10'))).toBe(false)
  })

  it('adds and removes thousands of members in one call', async () => {
    const t = target()
    const key = `${t.namespace}:bulk`
    const splitter = await t.splitter('agent-a')
    const members = Array.from({ length: 2500 }, (_, i) => `bulk-${i}`)
    expect(await splitter.sadd(key, 4, ...members)).toBe(2500)
    expect(await splitter.scard(key, 4)).toBe(2500)
    expect(await splitter.srem(key, 4, ...members.slice(0, 1200))).toBe(1200)
    expect(await splitter.scard(key, 4)).toBe(1300)
  })
})
