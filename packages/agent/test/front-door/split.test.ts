import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { demoteRegistry, publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'

const redis = useTestRedis()
const open: Redis[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

describe('split keys through the front door', () => {
  it('spreads INCRs from plain ioredis calls over shards, reads the sum, answers sets and sorted sets on the base key (folded), folds back', async () => {
    const { namespace, url } = redis()
    const r = new Redis(url, { heatsink: { namespace } })
    open.push(r)
    const plain = redis().client()
    await r.heatsink.ready()
    const counter = `${namespace}:likes`
    const set = `${namespace}:viewers`
    const zset = `${namespace}:board`
    await plain.set(counter, '100')
    const names = createNames(namespace)
    await publishRegistry(
      plain,
      names,
      ...[counter, set, zset].map((key) => ({ key, mitigation: 'split' as const, splitFactor: 4 })),
    )
    await waitFor(() => r.heatsink.mitigation(zset) === 'split', 'the split registration')
    // For 2 s after a promotion writes stay on the key itself, until every agent has heard of the split.
    await new Promise((resolve) => setTimeout(resolve, 2100))

    await Promise.all(Array.from({ length: 1000 }, () => r.incr(counter)))
    await r.pipeline().incrby(counter, 5).exec()
    expect(await r.get(counter)).toBe('1105')
    // The increments went to shards, not to the key.
    expect(Number(await plain.get(counter))).toBeLessThan(1105)

    await r.sadd(set, 'a', 'b', 'c')
    await r.srem(set, 'b')
    expect((await r.smembers(set)).sort()).toEqual(['a', 'c'])
    expect(await r.scard(set)).toBe(2)
    await r.zadd(zset, 3, 'c', 1, 'a', 2, 'b')
    expect(await r.zrange(zset, 0, -1, 'WITHSCORES')).toEqual(['a', '1', 'b', '2', 'c', '3'])

    await demoteRegistry(plain, names, counter, set, zset)
    await waitFor(() => r.heatsink.mitigation(counter) === undefined, 'the demotion')
    await waitFor(async () => (await plain.get(counter)) === '1105', 'the fold into the key', 10_000)
    expect(await r.incr(counter)).toBe(1106)
  })
})
