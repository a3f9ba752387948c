import { describe, expect, it } from 'vitest'
import { parseSoakOptions, warmUpSeconds } from '../src/options.js'
import { slopeMbPerMinute } from '../src/slope.js'

const MB = 1024 * 1024

describe('slopeMbPerMinute', () => {
  it('is the least-squares growth in MB per minute, noise and all', () => {
    // 2 MB/min with a sawtooth of garbage collections on top, sampled every 5 s for 10 minutes.
    const samples = Array.from({ length: 121 }, (_, i) => ({
      atSeconds: i * 5,
      rssBytes: 100 * MB + ((i * 5) / 60) * 2 * MB + (i % 6) * 0.5 * MB,
      heapBytes: i % 2 === 0 ? null : 50 * MB,
    }))
    expect(slopeMbPerMinute(samples, (s) => s.rssBytes)).toBeCloseTo(2, 1)
    expect(slopeMbPerMinute(samples, (s) => s.heapBytes)).toBeCloseTo(0, 6)
  })

  it('says nothing from fewer than three points', () => {
    expect(slopeMbPerMinute([{ atSeconds: 0, rssBytes: MB, heapBytes: null }], (s) => s.rssBytes)).toBeNull()
  })
})

describe('parseSoakOptions', () => {
  it('reads --name=value flags after pnpm’s lone --, with defaults for the rest', () => {
    const options = parseSoakOptions(['--', '--minutes=3', '--agents=2'])
    expect(options).toEqual({ minutes: 3, agents: 2, rate: 18_000, sampleSeconds: 5 })
    expect(warmUpSeconds(options)).toBe(60)
    expect(warmUpSeconds(parseSoakOptions(['--minutes=30']))).toBe(120)
  })

  it('names the argument it cannot use', () => {
    expect(() => parseSoakOptions(['--minutes=abc'])).toThrow(
      "--minutes must be a positive number, got 'abc'",
    )
    expect(() => parseSoakOptions(['--hours=1'])).toThrow('unknown argument --hours=1')
    expect(() => parseSoakOptions(['--agents=2.5'])).toThrow('--agents must be a whole number')
  })
})
