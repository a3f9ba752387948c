import { type Clock, ManualClock, systemClock } from '@heatsink/sketch'
import { describe, expect, it } from 'vitest'
import { AgentCounters } from '../src/events/stats.js'
import { ReplyCache, type ReplyFill } from '../src/l1/reply-cache.js'

/** A usable cache with the default fraction and cap, `k` admitted. */
function admitting(clock: Clock): ReplyCache {
  const l1 = new ReplyCache(
    { maxEntries: 512, ttlFraction: 0.2, maxTtlMs: 5000, maxBytes: 64 * 1024 * 1024 },
    clock,
    new AgentCounters(),
  )
  l1.setUsable(true)
  l1.admit('k')
  return l1
}

function cache() {
  const clock = new ManualClock(1_000_000)
  return { l1: admitting(clock), clock }
}

/** Fills `k` with a reply whose key has `pttl` ms left; how many fills ran so far. */
function filler(l1: ReplyCache) {
  let fills = 0
  return {
    fill: (pttl: number) =>
      l1.load('k', 'get', async (): Promise<ReplyFill> => {
        fills++
        return ['v', pttl]
      }),
    fills: () => fills,
  }
}

/** The entry of `k` is served for `ms` from now, and not 1 ms later. */
function expectLifetime(l1: ReplyCache, clock: ManualClock, ms: number): void {
  clock.advance(ms)
  expect(l1.get('k', 'get')).toBeDefined()
  clock.advance(1)
  expect(l1.get('k', 'get')).toBeUndefined()
}

describe('ReplyCache lifetimes', () => {
  it('a refill keeps the lifetime of the first fill since the last invalidation, cut to what the key has left', async () => {
    const { l1, clock } = cache()
    const { fill } = filler(l1)
    // A 1 s TTL: 200 ms, then 200 ms again with 800 ms left (not 160), and so on up to the key's expiry.
    await fill(1000)
    expectLifetime(l1, clock, 200)
    await fill(799)
    expectLifetime(l1, clock, 200)
    // 50 ms left of the key: the entry ends with it.
    await fill(50)
    expectLifetime(l1, clock, 50)
  })

  it('an invalidation or a retirement starts the lifetime anew from the key TTL then', async () => {
    const { l1, clock } = cache()
    const { fill } = filler(l1)
    await fill(1000)
    l1.invalidate('k', 'tracking')
    // Rewritten with a 10 s TTL: 2 s, not the 200 ms of the value before.
    await fill(10_000)
    expectLifetime(l1, clock, 2000)
    await fill(7999)
    l1.retire('k')
    l1.admit('k')
    // Demoted and promoted again: a key without TTL now gets the cap.
    await fill(-1)
    clock.advance(5000)
    expect(l1.get('k', 'get')).toBeDefined()
  })

  it('a fill with nothing left of the key stores nothing', async () => {
    const { l1 } = cache()
    const { fill, fills } = filler(l1)
    await fill(1000)
    l1.invalidate('k', 'tracking')
    await fill(0)
    expect(l1.get('k', 'get')).toBeUndefined()
    expect(fills()).toBe(2)
  })
})

describe('ReplyCache refresh ahead of expiry', () => {
  // Real time: the refresh is a timer.
  function refreshing(hits: () => number | undefined) {
    const l1 = admitting(systemClock)
    l1.hitsOf = hits
    return { l1, ...filler(l1) }
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  it('refills an entry read since its store before it expires, so reads never find it missing', async () => {
    let hits = 0
    const { l1, fill, fills } = refreshing(() => hits)
    // 0.2 x 2 s: 400 ms entries, refilled 40 ms before they expire.
    await fill(2000)
    for (let t = 0; t < 50; t++) {
      await sleep(20)
      expect(l1.get('k', 'get'), `${20 * t} ms on`).toBeDefined()
      hits++
    }
    // About a second: the first fill and two or three refreshes.
    expect(fills()).toBeGreaterThanOrEqual(3)
    expect(fills()).toBeLessThanOrEqual(4)
    l1.clear()
  })

  it('lets an entry nobody read expire, and one whose key TTL ends it', async () => {
    // 100 ms entries.
    const unread = refreshing(() => 0)
    await unread.fill(500)
    await sleep(150)
    expect(unread.fills()).toBe(1)
    expect(unread.l1.get('k', 'get')).toBeUndefined()

    let hits = 0
    const ending = refreshing(() => ++hits)
    await ending.fill(500)
    await sleep(50)
    // 60 ms left of the key: the refill's entry ends with it and is not refreshed.
    ending.l1.invalidate('k', 'tracking')
    await ending.fill(60)
    await sleep(150)
    expect(ending.fills()).toBe(2)
    expect(ending.l1.get('k', 'get')).toBeUndefined()
  })
})
