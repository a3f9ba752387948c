import { systemClock } from '@heatsink/sketch'
import { expect, it } from 'vitest'
import { hashShard } from '../src/hash.js'
import { seeded } from './support/random.js'
import { describeTargets } from './support/targets.js'

describeTargets('split copies', (target) => {
  it('writes every copy and the base key, and reads one copy chosen by the routing id', async () => {
    const t = target()
    const key = `${t.namespace}:profile`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    expect(await splitter.setCopies(key, 4, 'v1')).toBe('OK')
    expect(await plain.get(key)).toBe('v1')
    for (const shard of splitter.layout(key, 4).shards) expect(await plain.hget(shard.data, 'v')).toBe('v1')
    // A routing id always reads the same copy: make one copy differ and watch which ids see it.
    const odd = splitter.layout(key, 4).shards[2]!
    await plain.hset(odd.data, 'v', 'marked')
    const seen = new Map<string, string | null>()
    for (let user = 0; user < 64; user++)
      seen.set(`user-${user}`, await splitter.getCopy(key, 4, `user-${user}`))
    for (const [user, value] of seen) expect(await splitter.getCopy(key, 4, user)).toBe(value)
    const marked = [...seen.values()].filter((value) => value === 'marked').length
    expect(marked).toBeGreaterThan(4)
    expect(marked).toBeLessThan(32)
  })

  it('spreads unrouted reads over the copies at random', async () => {
    const t = target()
    const key = `${t.namespace}:flags`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a', { random: seeded(3) })
    await splitter.setCopies(key, 4, 'on')
    for (const [i, shard] of splitter.layout(key, 4).shards.entries())
      await plain.hset(shard.data, 'v', `copy-${i}`)
    const reads = new Set<string | null>()
    for (let i = 0; i < 40; i++) reads.add(await splitter.getCopy(key, 4))
    expect(reads).toEqual(new Set(['copy-0', 'copy-1', 'copy-2', 'copy-3']))
  })

  it('leaves every copy with the last write when writers race', async () => {
    const t = target()
    const key = `${t.namespace}:race`
    const plain = await t.client()
    const agents = await t.splitters(['a', 'b', 'c', 'd'])
    await Promise.all(
      agents.map(async (splitter, a) => {
        for (let i = 0; i < 50; i++) await splitter.setCopies(key, 8, `${a}:${i}`)
      }),
    )
    const values = new Set<string | null>([await plain.get(key)])
    for (const shard of agents[0]!.layout(key, 8).shards) values.add(await plain.hget(shard.data, 'v'))
    expect(values.size).toBe(1)
  })

  it('applies an expiry to every copy, and reads a missing copy through the base key, repairing it', async () => {
    const t = target()
    const key = `${t.namespace}:session`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    await splitter.setCopies(key, 2, 'short', 'PX', 60_000)
    const [first, second] = splitter.layout(key, 2).shards
    expect(await plain.pttl(key)).toBeGreaterThan(50_000)
    expect(await plain.pexpiretime(first!.data)).toBe(await plain.pexpiretime(key))
    await plain.del(second!.data)
    const reader = await t.splitter('agent-b')
    const routed = Array.from({ length: 64 }, (_, i) => `r${i}`).find((id) => hashShard(id, 2) === 1)
    expect(await reader.getCopy(key, 2, routed)).toBe('short')
    // The repair is sent in the background.
    await expect.poll(() => plain.hget(second!.data, 'v')).toBe('short')
    expect(await plain.pexpiretime(second!.data)).toBe(await plain.pexpiretime(key))
  })

  it('deletes every copy and the base key, and a write stamped earlier arriving late does not bring it back', async () => {
    const t = target()
    const key = `${t.namespace}:gone`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    // An agent whose write was stamped 10 s earlier (a slow writer) and reaches Redis after the delete.
    const slow = await t.splitter('agent-slow', { clock: { ...systemClock, now: () => Date.now() - 10_000 } })
    await splitter.setCopies(key, 4, 'here')
    expect(await splitter.delCopies(key, 4)).toBe(1)
    expect(await plain.exists(key)).toBe(0)
    for (let i = 0; i < 4; i++) expect(await splitter.getCopy(key, 4, `u${i}`)).toBeNull()
    await slow.setCopies(key, 4, 'stale')
    expect(await plain.exists(key)).toBe(0)
    for (let i = 0; i < 8; i++) expect(await splitter.getCopy(key, 4, `u${i}`)).toBeNull()
    expect(await splitter.delCopies(key, 4)).toBe(0)
  })

  it('serves n = 1 as the plain key', async () => {
    const t = target()
    const key = `${t.namespace}:single`
    const splitter = await t.splitter('agent-a')
    await splitter.setCopies(key, 1, 'only', 'EX', 100)
    expect(await splitter.getCopy(key, 1)).toBe('only')
    expect(await (await t.client()).ttl(key)).toBeGreaterThan(90)
  })
})
