import { expect, it } from 'vitest'
import type { Splitter } from '../src/index.js'
import { deferred } from './support/deferred.js'
import { describeTargets } from './support/targets.js'

describeTargets('reshard', (target) => {
  it('moves a counter from 4 shards to 8 under writers on both layouts: reads stay within the writes, nothing lost or doubled', async () => {
    const t = target()
    const key = `${t.namespace}:views`
    const plain = await t.client()
    await plain.set(key, '100')
    const [resharder, updated, lagging] = await t.splitters(['a', 'b', 'c'])
    for (let i = 0; i < 200; i++) await lagging.add(key, 4, 1)
    let issued = 200
    let acknowledged = 200
    let done = false
    const writer = (splitter: Splitter, n: number) => async () => {
      while (!done) {
        issued++
        await splitter.add(key, n, 1)
        acknowledged++
      }
    }
    const reader = (splitter: Splitter, n: number) => async () => {
      let reads = 0
      while (!done || reads < 10) {
        const low = acknowledged
        const value = Number(await splitter.get(key, n))
        expect(value).toBeGreaterThanOrEqual(100 + low)
        expect(value).toBeLessThanOrEqual(100 + issued)
        reads++
      }
    }
    // Two agents hear of the change and call reshard at once: one drains, the other waits; until its call
    // resolves it reads both layouts, and its writes for the new layout go through the old one's gates.
    const reshards = [resharder.reshard(key, 4, 8), updated.reshard(key, 4, 8)]
    const running = [
      ...Array.from({ length: 6 }, writer(lagging, 4)),
      ...Array.from({ length: 6 }, writer(updated, 8)),
      reader(lagging, 4)(),
      reader(updated, 8)(),
    ]
    const reports = await Promise.all(reshards)
    expect(reports.reduce((sum, report) => sum + report.drained, 0)).toBe(4)
    // A writer that still has not heard of the change: its gates send it to the new layout.
    for (let i = 0; i < 100; i++) {
      issued++
      await lagging.add(key, 4, 1)
      acknowledged++
    }
    done = true
    await Promise.all(running)
    expect(await updated.get(key, 8)).toBe(String(100 + acknowledged))
    for (const shard of resharder.layout(key, 4).shards) expect(await plain.exists(shard.data)).toBe(0)
    await resharder.fold(key, 8)
    expect(await plain.get(key)).toBe(String(100 + acknowledged))
  }, 60_000)

  it('has a reader that has not heard of a finished reshard follow it to the new layout', async () => {
    const t = target()
    const key = `${t.namespace}:followed`
    const [resharder, lagging] = await t.splitters(['a', 'b'])
    for (let i = 0; i < 40; i++) await resharder.add(key, 4, 1)
    await resharder.reshard(key, 4, 8)
    for (let i = 0; i < 40; i++) await resharder.add(key, 8, 1)
    const plain = await t.client()
    expect(Number(await plain.get(key))).toBe(40)
    expect(await resharder.get(key, 8)).toBe('80')
    // Layout 4 is empty and its closed gates point at layout 8, which the lagging reader did not know to read.
    expect(await lagging.get(key, 4)).toBe('80')
  })

  it('moves a set from 8 shards to 2 under adds and removes on both layouts', async () => {
    const t = target()
    const key = `${t.namespace}:set`
    const plain = await t.client()
    const [resharder, updated, lagging] = await t.splitters(['a', 'b', 'c'])
    const expected = new Set<string>()
    for (let i = 0; i < 100; i++) {
      await lagging.sadd(key, 8, `old-${i}`)
      expected.add(`old-${i}`)
    }
    const started = deferred()
    let stop = false
    const adder = async (splitter: Splitter, n: number, label: string) => {
      for (let i = 0; !stop; i++) {
        await splitter.sadd(key, n, `${label}-${i}`)
        expected.add(`${label}-${i}`)
        if (i === 20) started.resolve()
      }
    }
    const remover = async (splitter: Splitter, n: number, from: number) => {
      for (let i = from; i < 100; i += 4) {
        await splitter.srem(key, n, `old-${i}`)
        expected.delete(`old-${i}`)
      }
    }
    const reshards = [resharder.reshard(key, 8, 2), updated.reshard(key, 8, 2)]
    const adding = [adder(lagging, 8, 'lag'), adder(updated, 2, 'new')]
    await started.promise
    const removing = [remover(lagging, 8, 0), remover(updated, 2, 1)]
    await Promise.all(reshards)
    await Promise.all(removing)
    stop = true
    await Promise.all(adding)
    expect(new Set(await updated.smembers(key, 2))).toEqual(expected)
    expect(new Set(await lagging.smembers(key, 8))).toEqual(expected)
    await resharder.fold(key, 2)
    expect(new Set(await plain.smembers(key))).toEqual(expected)
  }, 60_000)
})
