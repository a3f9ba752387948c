import type { StoredKeyStats } from '@heatsink/aggregator'
import { describe, expect, it } from 'vitest'
import { AbsorbedShare } from '../src/absorbed-share.js'

function window(agentId: string, windowStart: number, lookups: number, fills: number): StoredKeyStats {
  return {
    key: 'k',
    agentId,
    windowStart,
    windowMs: 1000,
    l1Hits: lookups - fills,
    l1Misses: fills,
    l1Fills: fills,
    misses: 0,
    coalescedWaiters: 0,
    upstreamLoads: 0,
    staleServes: 0,
    timeouts: 0,
  } as StoredKeyStats
}

describe('AbsorbedShare', () => {
  it('sums the last five seconds of each agent, each window once however often it is read', () => {
    const share = new AbsorbedShare()
    // Two fills in one second and three in the next: 99.87% and 99.80% alone.
    expect(share.update('k', [window('a', 1000, 1500, 2)], 2500)).toBeCloseTo(1 - 2 / 1500, 6)
    expect(share.update('k', [window('a', 1000, 1500, 2)], 2900)).toBeCloseTo(1 - 2 / 1500, 6)
    expect(share.update('k', [window('a', 2000, 1500, 3)], 3500)).toBeCloseTo(1 - 5 / 3000, 6)
    for (let start = 3000; start <= 7000; start += 1000)
      share.update('k', [window('a', start, 1500, 2)], start + 1500)
    // Seven windows seen; the last five count: 2 fills each.
    expect(share.update('k', [window('a', 7000, 1500, 2)], 8500)).toBeCloseTo(1 - 10 / 7500, 6)
  })

  it('adds agents together and drops one that stopped reporting', () => {
    const share = new AbsorbedShare()
    share.update('k', [window('a', 1000, 1000, 1), window('b', 1000, 1000, 3)], 2500)
    expect(share.update('k', [window('a', 1000, 1000, 1), window('b', 1000, 1000, 3)], 2600)).toBeCloseTo(
      1 - 4 / 2000,
      6,
    )
    // b's last window is more than seven seconds old by now: only a's new ones count.
    expect(share.update('k', [window('a', 9000, 1000, 0)], 10_500)).toBe(1)
  })

  it('knows nothing before any lookup', () => {
    expect(new AbsorbedShare().update('k', [], 1000)).toBeNull()
  })
})
