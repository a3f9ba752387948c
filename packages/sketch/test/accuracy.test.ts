import { exactCounts, uniformStream, zipfStream } from '@heatsink/workload'
import { describe, expect, it } from 'vitest'
import { CountMinSketch, WindowRecorder } from '../src/index.js'

// A skewed stream like a cache's (Zipf 1.1), 1,000,000 requests over 100,000 keys, hot threshold 0.1% of the
// stream: enough cold keys share every cell for a plain sketch to overestimate some of them past the threshold.
const N = 1_000_000
const KEYS = 100_000
const THRESHOLD = N / 1000

describe('accuracy on a Zipf(1.1) stream against exact counts', () => {
  const stream = zipfStream({ length: N, keys: KEYS, s: 1.1, seed: 42 })
  const truth = exactCounts(stream)
  const trulyHot = [...truth].filter(([, count]) => count >= THRESHOLD).map(([key]) => key)
  const recorder = new WindowRecorder({ reportFloor: THRESHOLD })
  for (const key of stream) recorder.record(key)
  // Point estimates of every key, read before the window closes and the counters reset.
  const estimates = new Map([...truth.keys()].map((key) => [key, recorder.estimate(key)]))
  const absentEstimates = Array.from({ length: 1000 }, (_, i) => recorder.estimate(`absent:${i}`))
  const errorBound = recorder.errorBound()
  const summary = recorder.rollover(1000)
  const reportedHot = summary.hitters.filter((h) => h.count >= THRESHOLD)

  it('has a meaningful number of hot keys to find', () => {
    expect(trulyHot.length).toBeGreaterThan(50)
  })

  it('reports every key whose true count reaches 0.1% of the stream (recall 1.0)', () => {
    const reported = new Set(reportedHot.map((h) => h.key))
    const missed = trulyHot.filter((key) => !reported.has(key))
    expect(missed).toEqual([])
  })

  it('has precision of at least 0.99 at that threshold', () => {
    const falsePositives = reportedHot.filter((h) => (truth.get(h.key) ?? 0) < THRESHOLD)
    const precision = (reportedHot.length - falsePositives.length) / reportedHot.length
    expect(precision).toBeGreaterThanOrEqual(0.99)
  })

  it('never underestimates, and no key overestimates by more than (e / width) x N', () => {
    const bound = (Math.E / 2048) * N
    expect(errorBound).toBeCloseTo(bound)
    let worst = 0
    for (const [key, count] of truth) {
      const estimate = estimates.get(key) as number
      expect(estimate).toBeGreaterThanOrEqual(count)
      worst = Math.max(worst, estimate - count)
    }
    for (const hitter of summary.hitters) {
      const count = truth.get(hitter.key) ?? 0
      expect(hitter.count).toBeGreaterThanOrEqual(count)
      worst = Math.max(worst, hitter.count - count)
    }
    expect(worst).toBeLessThanOrEqual(bound)
  })

  it('reports hot keys with counts close to the truth, reads counted apart', () => {
    for (const hitter of reportedHot) {
      const count = truth.get(hitter.key) as number
      expect(hitter.count - count).toBeLessThanOrEqual(count * 0.01)
      expect(hitter.writes).toBe(0)
      expect(hitter.reads).toBeLessThanOrEqual(hitter.count)
    }
  })

  it('a point estimate of an absent key stays far below the threshold', () => {
    for (const estimate of absentEstimates) expect(estimate).toBeLessThan(THRESHOLD / 2)
  })
})

describe('streams with no hot key', () => {
  it('a uniform stream reports no hot key', () => {
    const stream = uniformStream({ length: N, keys: KEYS, seed: 7 })
    const recorder = new WindowRecorder({ reportFloor: THRESHOLD })
    for (const key of stream) recorder.record(key)
    const summary = recorder.rollover(1000)
    expect(summary.total).toBe(N)
    expect(summary.hitters.filter((h) => h.count >= THRESHOLD)).toEqual([])
    // top K is still reported, for the aggregator to sum across agents; every count is modest
    expect(summary.hitters.length).toBe(recorder.topK)
    for (const h of summary.hitters) expect(h.count).toBeLessThan(THRESHOLD / 2)
  })

  it("many keys sharing a cold key's cells in every row do not make it look hot", () => {
    // The adversary finds, for each row, keys that share the victim's cell in that row, and sends each one up to
    // half the threshold: the victim's four cells together see 8x the threshold of traffic, 2x in each cell.
    const depth = 4
    const width = 2048
    const probe = new CountMinSketch({ depth, width })
    const victimCells = probe.cellsOf('user:victim', new Uint32Array(depth))
    const perRow = 4
    const attackers: string[] = []
    const found = new Array<number>(depth).fill(0)
    const cells = new Uint32Array(depth)
    for (let i = 0; attackers.length < perRow * depth; i++) {
      const key = `attack:${i}`
      probe.cellsOf(key, cells)
      for (let row = 0; row < depth; row++) {
        if (cells[row] === victimCells[row] && found[row]! < perRow) {
          found[row]! += 1
          attackers.push(key)
          break
        }
      }
    }
    const perAttacker = THRESHOLD / 2
    const recorder = new WindowRecorder({ depth, width, reportFloor: THRESHOLD })
    for (let round = 0; round < perAttacker; round++) for (const key of attackers) recorder.record(key)
    for (let i = 0; i < 10; i++) recorder.record('user:victim')

    // A plain sketch would read the victim as the sum in its cells (2x the threshold); conservative update and
    // the candidates in front of the sketch keep it at about the largest single attacker's count.
    const victim = recorder.estimate('user:victim')
    expect(victim).toBeLessThanOrEqual(perAttacker + 10)
    expect(victim).toBeLessThan(THRESHOLD)
    const summary = recorder.rollover(1000)
    expect(summary.hitters.find((h) => h.key === 'user:victim')?.count ?? 0).toBeLessThan(THRESHOLD)
    expect(summary.hitters.filter((h) => h.count >= THRESHOLD)).toEqual([])
  })
})
