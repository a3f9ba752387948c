import { createNames, WIRE_VERSION, type WindowReport } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { WindowCounters } from '../src/detection/window-counters.js'

const WINDOW = 1_700_000_000_000

function report(
  agentId: string,
  counts: Record<string, number | [number, number, number]>,
  partial = false,
): WindowReport {
  return {
    v: WIRE_VERSION,
    kind: 'report',
    agentId,
    seq: 1,
    windowStart: WINDOW,
    windowMs: 1000,
    total: 0,
    dropped: 0,
    partial,
    hotKeyStats: [],
    candidates: Object.entries(counts).map(([key, c]) => {
      const [count, writes, misses] = typeof c === 'number' ? [c, 0, 0] : c
      return { key, count, reads: count - writes, writes, misses }
    }),
  }
}

describe('WindowCounters', () => {
  const redis = useTestRedis()

  function counters(shards = 1, missFloor?: number) {
    const names = createNames(redis().namespace)
    return new WindowCounters(redis().client(), {
      names,
      shards,
      windowMs: 1000,
      hotRps: 1000,
      retainMs: 60_000,
      ...(missFloor === undefined ? {} : { missFloor }),
    })
  }

  it('sums agents and reports the crossing on the report that takes a key over the threshold', async () => {
    const c = counters()
    expect((await c.apply(report('a1', { hot: 400, cold: 3 }))).crossings).toEqual([])
    expect((await c.apply(report('a2', { hot: 500 }))).crossings).toEqual([])
    const { crossings } = await c.apply(report('a3', { hot: 200 }))
    expect(crossings).toEqual([{ key: 'hot', windowStart: WINDOW, count: 1100, writes: 0, misses: 0 }])
    expect((await c.apply(report('a4', { hot: 50 }))).crossings).toEqual([])
    expect(await c.read(['hot', 'cold', 'absent'], WINDOW)).toEqual([
      { count: 1150, writes: 0, misses: 0 },
      { count: 3, writes: 0, misses: 0 },
      undefined,
    ])
  })

  it("returns the keys a report takes to the miss floor with the window's misses over every shard", async () => {
    const c = counters(4, 20)
    const keys = Array.from({ length: 12 }, (_, i) => `key:${i}`)
    const first = await c.apply(report('a1', Object.fromEntries(keys.map((key, i) => [key, [100, 0, i]]))))
    expect(first.missing).toEqual([])
    const second = await c.apply(
      report('a2', Object.fromEntries(keys.map((key, i) => [key, [100, 0, 2 * i]]))),
    )
    // 3i misses each: keys 7 to 11 are at the floor of 20; a key this report did not miss is not judged again.
    const atFloor = keys.slice(7).map((key, i) => ({ key, misses: 3 * (i + 7) }))
    expect(second.missing.sort((a, b) => a.misses - b.misses)).toEqual(atFloor)
    expect((await c.apply(report('a3', { 'key:11': [10, 0, 0] }))).missing).toEqual([])
    const read = await c.read(keys, WINDOW)
    expect(read.map((counts) => counts?.misses)).toEqual(keys.map((_, i) => 3 * i))
    expect(await c.misses([...keys, 'key:unreported'], WINDOW)).toEqual([...keys.map((_, i) => 3 * i), null])
    // Without a floor nothing is returned for misses.
    expect((await counters(4).apply(report('a4', { 'key:11': [300, 0, 300] }))).missing).toEqual([])
  })

  it('counts a report applied twice once, and ignores an older partial applied after the final one', async () => {
    const c = counters()
    const final = report('a1', { k: [900, 100, 7] })
    await c.apply(final)
    await c.apply(final)
    await c.apply(report('a1', { k: [300, 10, 1] }, true))
    await c.apply(report('a2', { k: [50, 5, 0] }))
    expect(await c.read(['k'], WINDOW)).toEqual([{ count: 950, writes: 105, misses: 7 }])
  })

  it('adds only the increase when a partial report is followed by the final one', async () => {
    const c = counters()
    expect((await c.apply(report('a1', { viral: 600 }, true))).crossings).toEqual([])
    const { crossings } = await c.apply(report('a1', { viral: 1200 }))
    expect(crossings.map((x) => x.count)).toEqual([1200])
    expect(await c.read(['viral'], WINDOW)).toEqual([{ count: 1200, writes: 0, misses: 0 }])
  })

  it('returns keys that rose to half the threshold as warm, once per rise, so they can be judged over a sliding second', async () => {
    const c = counters()
    expect(await c.apply(report('a1', { k: 400 }))).toEqual({
      crossings: [],
      warm: [],
      unresolved: [],
      missing: [],
    })
    const rose = await c.apply(report('a2', { k: 200, other: 10 }))
    expect(rose).toEqual({
      crossings: [],
      warm: [{ key: 'k', windowStart: WINDOW, count: 600, writes: 0, misses: 0 }],
      unresolved: [],
      missing: [],
    })
    // A replay raises nothing, so nothing is returned.
    expect(await c.apply(report('a2', { k: 200 }))).toEqual({
      crossings: [],
      warm: [],
      unresolved: [],
      missing: [],
    })
  })

  it('returns as unresolved the keys whose bound, counting the agents that did not report them, reaches the threshold', async () => {
    const c = counters()
    // 100 agents told to report keys seen 10 times: an agent silent about a key saw it at most 9 times.
    const fleet = { activeAgents: 100, reportFloor: 10 }
    const first = await c.apply(report('a1', { thin: 20, cold: 10 }), fleet)
    // thin: 20 + 99 x 9 = 911 < 1000 would rule it out; cold too. Neither is returned yet.
    expect(first.unresolved).toEqual([])
    for (let agent = 2; agent <= 10; agent++) await c.apply(report(`a${agent}`, { thin: 15 }), fleet)
    // 10 reporters: 20 + 9 x 15 = 155, bound 155 + 90 x 9 = 965: still short.
    const more = await c.apply(report('a11', { thin: 60 }), fleet)
    // 11 reporters: 215 + 89 x 9 = 1016 >= 1000: it may be hot, so it is watched.
    expect(more.unresolved).toEqual([{ key: 'thin', windowStart: WINDOW, count: 215, writes: 0, misses: 0 }])
    expect(await c.agentsIn(WINDOW)).toBe(11)
    // Reported by every agent, a key's bound is its sum: no longer unresolved however low.
    const all = { activeAgents: 2, reportFloor: 10 }
    await c.apply(report('b1', { spread: 9 }), all)
    expect((await c.apply(report('b2', { spread: 9 }), all)).unresolved).toEqual([])
  })

  it("sums agents' latest measured rates and crosses when the sum reaches the threshold, with the window's shares", async () => {
    const c = counters()
    await c.apply(report('a1', { surge: [200, 50, 10] }, true))
    const rated = (agentId: string, rates: Array<[string, number]>): WindowReport => ({
      ...report(agentId, {}, true),
      rates,
    })
    expect(await c.applyRates(rated('a1', [['surge', 600]]))).toEqual([])
    // An agent's rate replaces its previous one: the sum stays 600 + 300 = 900, below 1000 req/s.
    expect(await c.applyRates(rated('a2', [['surge', 200]]))).toEqual([])
    expect(await c.applyRates(rated('a2', [['surge', 300]]))).toEqual([])
    const crossed = await c.applyRates(rated('a3', [['surge', 150]]))
    // 1050 req/s over a 1 s window, with the window's write and miss shares so far (50 and 10 of 200).
    expect(crossed).toEqual([{ key: 'surge', windowStart: WINDOW, count: 1050, writes: 263, misses: 53 }])
    // Replayed, or rising further, it does not cross again.
    expect(await c.applyRates(rated('a3', [['surge', 150]]))).toEqual([])
    expect(await c.applyRates(rated('a3', [['surge', 400]]))).toEqual([])
  })

  it('spreads keys over counter shards and still sums and crosses correctly', async () => {
    const c = counters(8)
    const keys = Array.from({ length: 50 }, (_, i) => `k${i}`)
    await c.apply(report('a1', Object.fromEntries(keys.map((k) => [k, 600]))))
    const { crossings } = await c.apply(report('a2', Object.fromEntries(keys.map((k) => [k, 600]))))
    expect(crossings.map((x) => x.key).sort()).toEqual([...keys].sort())
    const hashes = await redis().keys()
    expect(hashes.length).toBeGreaterThan(4)
  })

  it('carries keys with spaces, newlines and non-ASCII characters intact', async () => {
    const c = counters()
    const odd = 'user: 名前\nwith space'
    await c.apply(report('a1', { [odd]: 700 }))
    const { crossings } = await c.apply(report('a2', { [odd]: 700 }))
    expect(crossings.map((x) => x.key)).toEqual([odd])
  })

  it('handles a report with thousands of candidates in one script call', async () => {
    const c = counters()
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`bulk:${i}`, i === 0 ? 2000 : 1]))
    const { crossings } = await c.apply(report('a1', many))
    expect(crossings.map((x) => x.key)).toEqual(['bulk:0'])
    expect(await c.read(['bulk:4999'], WINDOW)).toEqual([{ count: 1, writes: 0, misses: 0 }])
  })
})
