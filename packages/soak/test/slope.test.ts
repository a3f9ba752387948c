import { describe, expect, it } from 'vitest'
import { parseSoakOptions, warmUpSeconds } from '../src/options.js'
import { slopeMbPerMinute } from '../src/slope.js'

const MB = 1024 * 1024

describe('slopeMbPerMinute', () => {
  // Sampled every 5 s for 10 minutes.
  const minutes = (bytesAt: (seconds: number, i: number) => number | null) =>
    Array.from({ length: 121 }, (_, i) => ({
      atSeconds: i * 5,
      rssBytes: bytesAt(i * 5, i) ?? 0,
      heapBytes: bytesAt(i * 5, i),
    }))

  it('finds a leak of 2 MB/min under a sawtooth of collections, by peaks and by floors', () => {
    const leaking = minutes((s, i) => 100 * MB + (s / 60) * 2 * MB + (i % 6) * 3 * MB)
    expect(slopeMbPerMinute(leaking, (s) => s.rssBytes, 'peak')).toBeCloseTo(2, 0)
    expect(slopeMbPerMinute(leaking, (s) => s.heapBytes, 'floor')).toBeCloseTo(2, 0)
  })

  it('reads a plateau with one deep dip (pages handed back, then taken again) as flat, not growing', () => {
    // 110 MB, down to 82 MB for half a minute at minute 2, then back up over a minute.
    const dipped = minutes(
      (s) => (s >= 120 && s < 150 ? 82 : s >= 150 && s < 210 ? 82 + ((s - 150) / 60) * 28 : 110) * MB,
    )
    expect(Math.abs(slopeMbPerMinute(dipped, (s) => s.rssBytes, 'peak') as number)).toBeLessThan(0.5)
  })

  it('skips samples without a value and says nothing from fewer than three minutes', () => {
    const sparse = minutes((_s, i) => (i % 2 === 0 ? null : 50 * MB))
    expect(slopeMbPerMinute(sparse, (s) => s.heapBytes, 'floor')).toBeCloseTo(0, 6)
    expect(slopeMbPerMinute(sparse.slice(0, 20), (s) => s.heapBytes, 'floor')).toBeNull()
  })
})

describe('parseSoakOptions', () => {
  it('reads --name=value flags after pnpm’s lone --, with defaults for the rest', () => {
    const options = parseSoakOptions(['--', '--minutes=3', '--agents=2'])
    expect(options).toEqual({ minutes: 3, agents: 2, rate: 18_000, sampleSeconds: 5 })
    expect(parseSoakOptions(['--rate', '9000']).rate).toBe(9000)
    expect(warmUpSeconds(options)).toBe(60)
    expect(warmUpSeconds(parseSoakOptions(['--minutes=30']))).toBe(120)
  })

  it('names the argument it cannot use', () => {
    expect(() => parseSoakOptions(['--minutes=abc'])).toThrow(
      "--minutes must be a positive number, got 'abc'",
    )
    expect(() => parseSoakOptions(['--hours=1'])).toThrow("Unknown option '--hours'")
    expect(() => parseSoakOptions(['--minutes'])).toThrow("Option '--minutes <value>' argument missing")
    expect(() => parseSoakOptions(['30'])).toThrow("Unexpected argument '30'")
    expect(() => parseSoakOptions(['--agents=2.5'])).toThrow('--agents must be a whole number')
  })
})
