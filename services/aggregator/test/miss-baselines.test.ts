import { createNames, WIRE_VERSION, type WindowReport } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { WindowCounters } from '../src/detection/window-counters.js'
import { MissBaselines } from '../src/storms/miss-baselines.js'

const FIRST = 1_700_000_000_000
const WINDOW_MS = 1000

function missed(windowStart: number, key: string, misses: number): WindowReport {
  return {
    v: WIRE_VERSION,
    kind: 'report',
    agentId: 'a1',
    seq: 1,
    windowStart,
    windowMs: WINDOW_MS,
    total: 0,
    dropped: 0,
    partial: false,
    hotKeyStats: [],
    candidates: [{ key, count: 1000, reads: 1000, writes: 0, misses }],
  }
}

describe('MissBaselines', () => {
  const redis = useTestRedis()

  function setUp() {
    const counters = new WindowCounters(redis().client(), {
      names: createNames(redis().namespace),
      shards: 1,
      windowMs: WINDOW_MS,
      hotRps: 1_000_000,
      retainMs: 60_000,
    })
    const windowsRead: number[] = []
    // The real counters, with the windows each read asks for noted.
    const reading = {
      misses: (keys: readonly string[], windowStart: number) => {
        windowsRead.push(windowStart)
        return counters.misses(keys, windowStart)
      },
    }
    return { counters, windowsRead, baselines: new MissBaselines(reading, 10, WINDOW_MS, () => 0) }
  }

  it('is the mean misses over the windows that reported the key, and none with fewer than half of them', async () => {
    const { counters, baselines } = setUp()
    const at = (i: number) => FIRST + i * WINDOW_MS
    for (let i = 0; i < 4; i++) await counters.apply(missed(at(i), 'k', 10 * (i + 1)))
    // Windows 0 to 3 before window 10: 4 of 10 reported.
    expect(await baselines.means(['k'], at(10)).then(([baseline]) => baseline?.mean)).toBeUndefined()
    await counters.apply(missed(at(4), 'k', 50))
    // Window 4 is read again (it is one of the newest two), so the fifth window counts: mean of 10..50.
    expect(await baselines.means(['k'], at(6)).then(([baseline]) => baseline?.mean)).toBe(30)
  })

  it('reads only the newest three windows as the judged window slides, whatever order windows come in', async () => {
    const { counters, windowsRead, baselines } = setUp()
    const at = (i: number) => FIRST + i * WINDOW_MS
    for (let i = 0; i < 12; i++) await counters.apply(missed(at(i), 'k', 20))
    await Promise.all([
      baselines.means(['k'], at(11)).then(([baseline]) => baseline?.mean),
      baselines.means(['k'], at(10)).then(([baseline]) => baseline?.mean),
    ])
    windowsRead.length = 0
    expect(await baselines.means(['k'], at(12)).then(([baseline]) => baseline?.mean)).toBe(20)
    // Windows 2..8 were kept; 9 was read only while it was one of the newest two; 10 and 11 are read again.
    expect(windowsRead.sort()).toEqual([at(9), at(10), at(11)])
    windowsRead.length = 0
    // Sliding on: the newest two again, and the window that just settled once more, to keep.
    await baselines.means(['k'], at(13)).then(([baseline]) => baseline?.mean)
    expect(windowsRead.sort()).toEqual([at(10), at(11), at(12)])
  })

  it('leaves the newest windows unread when the settled ones alone show the misses calm', async () => {
    const { counters, windowsRead, baselines } = setUp()
    const at = (i: number) => FIRST + i * WINDOW_MS
    for (let i = 0; i < 12; i++) await counters.apply(missed(at(i), 'k', 20))
    await baselines.means(['k'], at(11))
    windowsRead.length = 0
    // Windows 2..9 hold 160 misses in 8 reports: the mean is at least 160 / 10 whatever windows 10 and 11 hold.
    expect(await baselines.means(['k'], at(12), [15])).toEqual([{ mean: 16, exact: false }])
    expect(windowsRead).toEqual([at(9)])
    // A bound of 16 does not show 90 misses calm (90 / 5 = 18): the newest two are read, and the mean is exact.
    windowsRead.length = 0
    expect(await baselines.means(['k'], at(12), [18])).toEqual([{ mean: 20, exact: true }])
    expect(windowsRead.sort()).toEqual([at(10), at(11)])
  })
})
