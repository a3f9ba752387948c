import { expect, it } from 'vitest'
import { NotAnIntegerError, type Splitter } from '../src/index.js'
import { describeTargets } from './support/targets.js'

describeTargets('split counter', (target) => {
  it('keeps the value the counter held before the split, and reads the sum of base and shards', async () => {
    const t = target()
    const key = `${t.namespace}:likes`
    const plain = await t.client()
    await plain.set(key, '1000')
    const splitter = await t.splitter('agent-a')
    expect(await splitter.get(key, 8)).toBe('1000')
    for (let i = 0; i < 50; i++) await splitter.add(key, 8, 2)
    expect(await splitter.get(key, 8)).toBe('1100')
    // The base key is untouched: the increments sit in the shards.
    expect(await plain.get(key)).toBe('1000')
    let shardSum = 0
    for (const shard of splitter.layout(key, 8).shards) shardSum += Number((await plain.get(shard.data)) ?? 0)
    expect(shardSum).toBe(100)
  })

  it('answers INCR, INCRBY, DECR and DECRBY with the value after the write, as Redis does', async () => {
    const t = target()
    const key = `${t.namespace}:views`
    const splitter = await t.splitter('agent-a')
    expect(await splitter.get(key, 4)).toBeNull()
    expect(await splitter.incr(key, 4)).toBe(1)
    expect(await splitter.incrby(key, 4, 10)).toBe(11)
    expect(await splitter.decr(key, 4)).toBe(10)
    expect(await splitter.decrby(key, 4, 3)).toBe(7)
    expect(await splitter.decrby(key, 4, '-3')).toBe(10)
    expect(await splitter.get(key, 4)).toBe('10')
  })

  it('reads back exactly 100,000 more after 100,000 concurrent increments from 4 agents', async () => {
    const t = target()
    const key = `${t.namespace}:counter`
    const plain = await t.client()
    await plain.set(key, '-12345')
    const agents = await t.splitters(['a', 'b', 'c', 'd'])
    const before = Number(await agents[0]!.get(key, 8))
    expect(before).toBe(-12345)
    const perAgent = 25_000
    const inFlight = 200
    await Promise.all(
      agents.map(async (splitter, a) => {
        // Every fifth agent-write asks for the value back (INCR), the rest are plain adds.
        const worker = async (w: number) => {
          for (let i = w; i < perAgent; i += inFlight) {
            if ((i + a) % 5 === 0) await splitter.incr(key, 8)
            else await splitter.add(key, 8, 1)
          }
        }
        await Promise.all(Array.from({ length: inFlight }, (_, w) => worker(w)))
      }),
    )
    for (const splitter of agents) expect(Number(await splitter.get(key, 8))).toBe(before + 100_000)
  }, 120_000)

  it('returns a value from INCR that counts every write acknowledged before it', async () => {
    const t = target()
    const key = `${t.namespace}:monotone`
    const splitter = await t.splitter('agent-a')
    const replies = await Promise.all(Array.from({ length: 300 }, () => splitter.incr(key, 8)))
    // Each reply was read after its own write: at least its rank among the writes, and never above the total.
    expect(Math.max(...replies)).toBe(300)
    for (const reply of replies) expect(reply).toBeGreaterThanOrEqual(1)
    expect(await splitter.get(key, 8)).toBe('300')
  })

  it('rejects a base key or shard that does not hold an integer', async () => {
    const t = target()
    const key = `${t.namespace}:text`
    const plain = await t.client()
    await plain.set(key, 'hello')
    const splitter: Splitter = await t.splitter('agent-a')
    await expect(splitter.get(key, 4)).rejects.toBeInstanceOf(NotAnIntegerError)
    const other = `${t.namespace}:other`
    await plain.set(splitter.layout(other, 2).shards[1]!.data, 'x')
    await expect(splitter.get(other, 2)).rejects.toMatchObject({ code: 'E_SPLIT_NOT_INTEGER' })
  })

  it('sums exactly past 2^53, as INCRBY counts up to 2^63', async () => {
    const t = target()
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    // Sixteen 15-digit shards: each fits a double exactly, their sum does not.
    const many = `${t.namespace}:many-large`
    await plain.set(many, '-5')
    for (const shard of splitter.layout(many, 16).shards) await plain.set(shard.data, '999999999999999')
    expect(await splitter.get(many, 16)).toBe('15999999999999979')
    // A base key past 2^53 beside small negative shards.
    const huge = `${t.namespace}:huge-base`
    await plain.set(huge, '9223372036854775000')
    for (const shard of splitter.layout(huge, 4).shards) await plain.set(shard.data, '-250')
    expect(await splitter.get(huge, 4)).toBe('9223372036854774000')
  })

  it("counts the requests each shard received, for the agent's statistics", async () => {
    const t = target()
    const key = `${t.namespace}:counted`
    const splitter = await t.splitter('agent-a')
    for (let i = 0; i < 40; i++) await splitter.add(key, 4, 1)
    await splitter.get(key, 4)
    const counts = splitter.takeShardCounts().get(key)!
    expect(counts).toHaveLength(4)
    // 40 writes spread over the shards, plus one read that reached all four.
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(44)
    for (const count of counts) expect(count).toBeGreaterThanOrEqual(1)
    expect(splitter.takeShardCounts().size).toBe(0)
  })

  it('treats split factor 1 as the key unsplit', async () => {
    const t = target()
    const key = `${t.namespace}:plain`
    const splitter = await t.splitter('agent-a')
    expect(await splitter.incrby(key, 1, 5)).toBe(5)
    expect(await (await t.client()).get(key)).toBe('5')
    expect(splitter.layout(key, 1).shards).toHaveLength(0)
  })

  it('rejects split factors that are not powers of two', async () => {
    const splitter = await target().splitter('agent-a')
    for (const n of [0, 3, 6, 2048, 1.5]) {
      await expect(splitter.get('k', n)).rejects.toMatchObject({ code: 'E_SPLIT_FACTOR' })
    }
  })
})
