import { describe, expect, it } from 'vitest'
import {
  ManualClock,
  SlidingFrequency,
  TumblingWindows,
  WindowRecorder,
  type WindowSummary,
} from '../src/index.js'

describe('TumblingWindows', () => {
  it('closes windows on epoch-aligned boundaries, without reading the clock per request', () => {
    const clock = new ManualClock(10_250)
    const recorder = new WindowRecorder()
    const closed: WindowSummary[] = []
    const windows = new TumblingWindows(recorder, { clock, windowMs: 1000, onWindow: (s) => closed.push(s) })
    windows.start()
    recorder.record('a')
    clock.advance(749)
    expect(closed).toEqual([])
    clock.advance(1)
    recorder.record('b')
    recorder.record('b')
    clock.advance(1000)
    expect(closed.map((s) => [s.windowStart, s.windowMs, s.total])).toEqual([
      [10_000, 1000, 1],
      [11_000, 1000, 2],
    ])
    expect(closed[1]?.hitters).toEqual([{ key: 'b', count: 2, reads: 2, writes: 0, misses: 0, forms: 0 }])
  })

  it('flushes the partial window on stop, and stops firing', () => {
    const clock = new ManualClock(0)
    const recorder = new WindowRecorder()
    const closed: WindowSummary[] = []
    const windows = new TumblingWindows(recorder, { clock, windowMs: 500, onWindow: (s) => closed.push(s) })
    windows.start()
    clock.advance(600)
    recorder.record('x')
    clock.advance(100)
    windows.stop({ flush: true })
    expect(closed.at(-1)).toMatchObject({ windowStart: 500, windowMs: 200, total: 1 })
    clock.advance(5000)
    expect(closed).toHaveLength(2)
    expect(clock.pending).toBe(0)
  })

  it('closes at the latest boundary when the event loop stalled past several', () => {
    // A clock whose timer we fire by hand after time has already run 2.5 windows past the due boundary.
    let now = 0
    let due: (() => void) | undefined
    const stallingClock = {
      now: () => now,
      setTimeout: (callback: () => void) => {
        due = callback
        return 1
      },
      clearTimeout: () => {},
    }
    const recorder = new WindowRecorder()
    const closed: WindowSummary[] = []
    const windows = new TumblingWindows(recorder, {
      clock: stallingClock,
      windowMs: 100,
      onWindow: (s) => closed.push(s),
    })
    windows.start()
    recorder.record('a')
    now = 350
    due?.()
    expect(closed.map((s) => [s.windowStart, s.windowMs])).toEqual([[0, 300]])
    expect(recorder.windowStart).toBe(300)
    windows.stop()
  })
})

describe('SlidingFrequency', () => {
  const summary = (windowStart: number, counts: Record<string, number>): WindowSummary => ({
    windowStart,
    windowMs: 1000,
    total: Object.values(counts).reduce((a, b) => a + b, 0),
    overflowed: 0,
    hitters: Object.entries(counts).map(([key, count]) => ({
      key,
      count,
      reads: count,
      writes: 0,
      misses: 0,
      forms: 0,
    })),
  })

  it('sums each key over the last W windows and forgets older ones', () => {
    const sliding = new SlidingFrequency(3)
    sliding.push(summary(0, { a: 100 }))
    sliding.push(summary(1000, { a: 200, b: 10 }))
    sliding.push(summary(2000, { a: 300 }))
    expect(sliding.count('a')).toBe(600)
    expect(sliding.rate('a')).toBe(200)
    sliding.push(summary(3000, { b: 5 }))
    expect(sliding.count('a')).toBe(500)
    expect(sliding.count('b')).toBe(15)
    expect(sliding.top(1)).toEqual([{ key: 'a', count: 500 }])
    expect(sliding.entries()[0]).toEqual({ key: 'a', windowStart: 1000, count: 200 })
  })
})

describe('ManualClock', () => {
  it('fires due timers in time order and skips cleared ones', () => {
    const clock = new ManualClock(0)
    const fired: string[] = []
    clock.setTimeout(() => fired.push('b'), 20)
    const cleared = clock.setTimeout(() => fired.push('x'), 5)
    clock.setTimeout(() => fired.push('a'), 10)
    clock.clearTimeout(cleared)
    clock.advance(15)
    expect(fired).toEqual(['a'])
    expect(clock.now()).toBe(15)
    clock.advance(5)
    expect(fired).toEqual(['a', 'b'])
  })
})
