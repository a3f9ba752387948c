import { createNames, decodeReport, STREAM_FIELD } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { demoteRegistry, publishRegistry } from '../src/testing.js'
import { useAgents, waitFor } from './support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

describe('split keys through the agent', () => {
  async function splitAgents(count: number, key: string, splitFactor: number) {
    const agents = Array.from({ length: count }, (_, i) => newAgent({ agentId: `splitter-${i}` }))
    await Promise.all(agents.map((agent) => agent.ready()))
    await publishRegistry(redis().client(), createNames(redis().namespace), {
      key,
      mitigation: 'split',
      splitFactor,
    })
    await waitFor(() => agents.every((agent) => agent.mitigation(key) === 'split'), 'the split registration')
    // For 2 s after a promotion writes stay on the key itself, until every agent has heard of the split.
    await new Promise((resolve) => setTimeout(resolve, 2100))
    return agents
  }

  it("spreads a counter's increments from 4 agents over its shards, reads the exact sum, and folds it back on demotion", async () => {
    const key = `${redis().namespace}:likes:post:9`
    const client = redis().client()
    await client.set(key, '100')
    const agents = await splitAgents(4, key, 4)
    const perAgent = 2500
    await Promise.all(
      agents.map((agent) => Promise.all(Array.from({ length: perAgent }, () => agent.incr(key)))),
    )
    for (const agent of agents) expect(await agent.get(key)).toBe('10100')
    // The increments really went to shards, not to the key.
    expect(Number(await client.get(key))).toBeLessThan(10_100)

    await demoteRegistry(client, createNames(redis().namespace), key)
    await waitFor(() => agents.every((agent) => agent.mitigation(key) === undefined), 'the demotion')
    await waitFor(async () => (await client.get(key)) === '10100', 'the fold into the key', 10_000)
    for (const agent of agents) expect(await agent.get(key)).toBe('10100')
    expect(await agents[0]?.incr(key)).toBe(10_101)
  })

  it("keeps a split set's members exact across agents, removals included", async () => {
    const key = `${redis().namespace}:followers`
    const [a, b] = await splitAgents(2, key, 4)
    if (a === undefined || b === undefined) throw new Error('two agents expected')
    await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).sadd(key, `user:${i}`)))
    await b.srem(key, 'user:0', 'user:1')
    expect(await a.scard(key)).toBe(48)
    expect((await b.smembers(key)).sort()).toEqual(
      Array.from({ length: 48 }, (_, i) => `user:${i + 2}`).sort(),
    )
    expect(await a.sismember(key, 'user:0')).toBe(0)
    expect(await a.sismember(key, 'user:7')).toBe(1)
  })

  it('merges a split sorted set in score order', async () => {
    const key = `${redis().namespace}:leaderboard`
    const [a] = await splitAgents(1, key, 4)
    if (a === undefined) throw new Error('an agent expected')
    for (let i = 0; i < 20; i++) await a.zadd(key, i * 10, `player:${i}`)
    await a.zadd(key, 5, 'player:19')
    expect(await a.zcard(key)).toBe(20)
    expect(await a.zscore(key, 'player:19')).toBe('5')
    expect(await a.zrevrange(key, 0, 2)).toEqual(['player:18', 'player:17', 'player:16'])
    expect(await a.zrange(key, 0, 1, 'WITHSCORES')).toEqual(['player:0', '0', 'player:19', '5'])
  })

  it('passes the commands to Redis unchanged for keys that are not split', async () => {
    const [agent] = await splitAgents(1, `${redis().namespace}:other`, 2)
    if (agent === undefined) throw new Error('an agent expected')
    const key = `${redis().namespace}:plain:counter`
    expect(await agent.incrby(key, 5)).toBe(5)
    expect(await agent.decr(key)).toBe(4)
    expect(await redis().client().get(key)).toBe('4')
  })

  it("reports the split key's writes per shard", async () => {
    const key = `${redis().namespace}:views`
    const [agent] = await splitAgents(1, key, 2)
    if (agent === undefined) throw new Error('an agent expected')
    await Promise.all(Array.from({ length: 200 }, () => agent.incr(key)))
    await agent.close()
    const stream = createNames(redis().namespace).reportStreamFor('splitter-0')
    const reports = (await redis().client().xrange(stream, '-', '+')).map(([, fields]) =>
      decodeReport(fields[fields.indexOf(STREAM_FIELD) + 1] as string),
    )
    // Requests per shard, summed over the windows they fell in: the 200 writes, plus the shared read-backs.
    const counts = [0, 0]
    for (const stats of reports.flatMap((r) => r.hotKeyStats).filter((s) => s.key === key)) {
      stats.splitShardCounts?.forEach((n, i) => {
        counts[i] = (counts[i] ?? 0) + n
      })
    }
    expect(counts.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(200)
    expect(counts.every((n) => n > 50)).toBe(true)
  })
})
