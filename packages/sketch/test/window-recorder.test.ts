import { exactCounts, zipfStream } from '@heatsink/workload'
import { describe, expect, it } from 'vitest'
import { InvalidSketchOptionError, WindowRecorder } from '../src/index.js'

function record(recorder: WindowRecorder, key: string, times: number, write = false) {
  for (let i = 0; i < times; i++) recorder.record(key, write)
}

describe('WindowRecorder', () => {
  it('counts reads and writes apart', () => {
    const recorder = new WindowRecorder({ windowStart: 0 })
    record(recorder, 'counter:likes', 30, true)
    record(recorder, 'counter:likes', 10)
    record(recorder, 'profile:1', 5)
    const summary = recorder.rollover(1000)
    expect(summary).toMatchObject({ windowStart: 0, windowMs: 1000, total: 45, overflowed: 0 })
    expect(summary.hitters).toEqual([
      { key: 'counter:likes', count: 40, reads: 10, writes: 30, misses: 0, forms: 0 },
      { key: 'profile:1', count: 5, reads: 5, writes: 0, misses: 0, forms: 0 },
    ])
  })

  it('counts misses of tracked keys, told apart from reads', () => {
    const recorder = new WindowRecorder()
    record(recorder, 'flash:sale', 10)
    for (let i = 0; i < 4; i++) recorder.recordMiss('flash:sale')
    recorder.recordMiss('never:recorded')
    expect(recorder.rollover(1000).hitters).toEqual([
      { key: 'flash:sale', count: 10, reads: 10, writes: 0, misses: 4, forms: 0 },
    ])
  })

  it("answers a tracked key's reads or writes so far, and 0 for an untracked key, whose misses need no watching", () => {
    const recorder = new WindowRecorder({ topK: 1, capacity: 1 })
    expect(recorder.record('first')).toBe(1)
    expect(recorder.record('first')).toBe(2)
    expect(recorder.record('first', true)).toBe(1)
    expect(recorder.record('first')).toBe(3)
    // The one candidate slot is taken by a stronger key: a new key with a lower estimate is not tracked.
    expect(recorder.record('second')).toBe(0)
  })

  it('peeks at the open window without closing it', () => {
    const recorder = new WindowRecorder()
    record(recorder, 'a', 3)
    expect(recorder.peek()).toEqual([{ key: 'a', count: 3, reads: 3, writes: 0, misses: 0, forms: 0 }])
    record(recorder, 'a', 2)
    expect(recorder.rollover(1000).hitters).toEqual([
      { key: 'a', count: 5, reads: 5, writes: 0, misses: 0, forms: 0 },
    ])
  })

  it('reports the top K keys and every further key that reaches the report floor', () => {
    const recorder = new WindowRecorder({ topK: 2, capacity: 8, reportFloor: 50 })
    record(recorder, 'a', 100)
    record(recorder, 'b', 90)
    record(recorder, 'c', 60)
    record(recorder, 'd', 55)
    record(recorder, 'e', 20)
    const keys = recorder.rollover(1000).hitters.map((h) => h.key)
    expect(keys).toEqual(['a', 'b', 'c', 'd'])
  })

  it('keeps tracking beyond capacity when every candidate has reached the floor, up to a hard cap', () => {
    const recorder = new WindowRecorder({ topK: 1, capacity: 2, reportFloor: 3, maxCandidates: 3 })
    for (const key of ['a', 'b', 'c', 'd']) record(recorder, key, 5)
    const summary = recorder.rollover(1000)
    expect(summary.hitters.map((h) => h.key).sort()).toEqual(['a', 'b', 'c'])
    expect(summary.overflowed).toBeGreaterThan(0)
  })

  it('calls the fast path once per key per window when it reaches the report floor', () => {
    const crossed: Array<[string, number]> = []
    const recorder = new WindowRecorder({
      reportFloor: 10,
      onFloorCrossed: (key, count) => crossed.push([key, count]),
    })
    record(recorder, 'hot', 25)
    record(recorder, 'warm', 9)
    expect(crossed).toEqual([['hot', 10]])
    recorder.rollover(1000)
    record(recorder, 'hot', 10)
    expect(crossed).toEqual([
      ['hot', 10],
      ['hot', 10],
    ])
  })

  it('counts a key that stays hot exactly in the next window', () => {
    const recorder = new WindowRecorder({ topK: 4, capacity: 16 })
    record(recorder, 'hot', 500)
    for (let i = 0; i < 5000; i++) recorder.record(`noise:${i}`)
    recorder.rollover(1000)
    record(recorder, 'hot', 321)
    const summary = recorder.rollover(2000)
    expect(summary.windowStart).toBe(1000)
    expect(summary.hitters[0]).toEqual({ key: 'hot', count: 321, reads: 321, writes: 0, misses: 0, forms: 0 })
  })

  it('keeps an evicted key as an upper bound, so it can return with its full count', () => {
    const recorder = new WindowRecorder({ topK: 1, capacity: 1, reportFloor: 1000 })
    record(recorder, 'early', 5)
    record(recorder, 'late', 8) // evicts 'early', whose 5 exact counts go back into the sketch
    expect(recorder.estimate('early')).toBeGreaterThanOrEqual(5)
    record(recorder, 'early', 10)
    expect(recorder.estimate('early')).toBeGreaterThanOrEqual(15)
  })

  it('folds candidates into a mergeable sketch that answers for every key', () => {
    const a = new WindowRecorder()
    const b = new WindowRecorder()
    record(a, 'k', 7)
    record(b, 'k', 5)
    record(b, 'j', 2)
    const merged = a.toSketch().merge(b.toSketch())
    expect(merged.estimate('k')).toBe(12)
    expect(merged.estimate('j')).toBe(2)
  })

  it('rejects bad options with the option named', () => {
    expect(() => new WindowRecorder({ topK: 0 })).toThrow(InvalidSketchOptionError)
    expect(() => new WindowRecorder({ topK: 10, capacity: 5 })).toThrow(/capacity/)
  })
})

describe('WindowRecorder with deferColdKeys', () => {
  it('keeps every estimate an upper bound within the error bound, and finds the hot keys exactly', async () => {
    const stream = zipfStream({ length: 50_000, keys: 5_000, s: 1.1, seed: 11 })
    const recorder = new WindowRecorder({ windowStart: 0, deferColdKeys: true })
    let coldAnswers = 0
    for (let i = 0; i < stream.length; i++) {
      if (recorder.record(stream[i] as string) === 0) coldAnswers++
      // A turn of the event loop now and then, as between batches of requests.
      if (i % 1000 === 999) await new Promise((resolve) => setImmediate(resolve))
    }
    // Some keys were left for the batch: record() answered 0 for them without counting them yet.
    expect(coldAnswers).toBeGreaterThan(0)
    const truth = exactCounts(stream)
    const bound = recorder.errorBound()
    // Reading drains what is pending first, so the summary counts every request.
    const summary = recorder.rollover(1000)
    expect(summary.total).toBe(stream.length)
    for (const hitter of summary.hitters) {
      const exact = truth.get(hitter.key) ?? 0
      expect(hitter.count).toBeGreaterThanOrEqual(exact)
      expect(hitter.count - exact).toBeLessThanOrEqual(bound)
    }
    const top = [...truth].sort((a, b) => b[1] - a[1]).slice(0, 10)
    for (const [key, count] of top) expect(summary.hitters.find((h) => h.key === key)?.count).toBe(count)
  })

  it('counts a key admitted part-way through a batch exactly from then on, as one candidate', () => {
    const recorder = new WindowRecorder({ windowStart: 0, deferColdKeys: true, topK: 4, capacity: 4 })
    // Fill the candidates with keys that will stay above the newcomer's early estimates.
    for (const key of ['a', 'b', 'c', 'd']) for (let i = 0; i < 20; i++) recorder.record(key)
    // One batch, no turn of the event loop: 'hot' is pending 300 times and admitted once its estimate passes
    // the weakest candidate's 20; from there every pending entry of it is counted on the candidate.
    for (let i = 0; i < 300; i++) recorder.record('hot', i % 3 === 0)
    const hitters = recorder.rollover(1000).hitters
    expect(hitters.filter((h) => h.key === 'hot')).toEqual([
      { key: 'hot', count: 300, reads: expect.any(Number), writes: expect.any(Number), misses: 0, forms: 0 },
    ])
    const hot = hitters.find((h) => h.key === 'hot')
    // Admitted at its estimate (21, one past the weakest), then 279 counted exactly.
    expect((hot?.reads ?? 0) + (hot?.writes ?? 0)).toBe(300 - 21 + 1)
  })

  it('answers for a candidate on the request only once it is hot, and counts it exactly before that', async () => {
    const recorder = new WindowRecorder({ windowStart: 0, deferColdKeys: true, reportFloor: 1 })
    const turn = () => new Promise((resolve) => setImmediate(resolve))
    const answers: number[] = []
    for (let i = 0; i < 12; i++) {
      answers.push(recorder.record('warm', false, 2))
      await turn()
    }
    // Admitted by its first request (the candidates had room), counted in the batch until its eighth request since
    // then, found on the request from the ninth: its 10th read onwards.
    expect(answers).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 11, 12])
    // Candidates that are not hot are counted exactly all the same, in the batch.
    for (const key of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) recorder.record(key, i === 0, 4)
    const [first, ...rest] = recorder.rollover(1000).hitters
    expect(first).toEqual({ key: 'warm', count: 12, reads: 12, writes: 0, misses: 0, forms: 2 })
    expect(rest.sort((x, y) => x.key.localeCompare(y.key))).toEqual(
      ['a', 'b', 'c'].map((key) => ({ key, count: 3, reads: 2, writes: 1, misses: 0, forms: 4 })),
    )
    // Hot stays hot while tracked: from the next window's first request.
    expect(recorder.record('warm')).toBe(1)
  })

  it('reports the misses of reads answered on the request, scaled to the reads the batch counted unwatched', async () => {
    const recorder = new WindowRecorder({ windowStart: 0, deferColdKeys: true, reportFloor: 1 })
    for (let i = 0; i < 9; i++) recorder.record('absent')
    await new Promise((resolve) => setImmediate(resolve))
    // Hot now: eight more reads answered on the request, half of them watched and found missing.
    for (let i = 0; i < 8; i++) expect(recorder.record('absent')).toBe(10 + i)
    for (let i = 0; i < 4; i++) recorder.recordMiss('absent')
    // 4 misses in 8 watched reads: half of all 17.
    expect(recorder.rollover(1000).hitters).toEqual([
      { key: 'absent', count: 17, reads: 17, writes: 0, misses: 9, forms: 0 },
    ])
  })

  it('raises the count that makes a key hot to the last window’s average sketch cell', async () => {
    const recorder = new WindowRecorder({ windowStart: 0, deferColdKeys: true })
    const perCell = 20
    const total = perCell * recorder.sketch.width
    for (let i = 0; i < total; i++) recorder.record(`cold:${i % 50_000}`)
    recorder.rollover(1000)
    const answers: number[] = []
    for (let i = 0; i < perCell + 2; i++) {
      answers.push(recorder.record('fresh'))
      await new Promise((resolve) => setImmediate(resolve))
    }
    // Admitted on its first request (from the sketch, as the weakest kept candidate's count is 0), hot after 20.
    expect(answers.slice(perCell - 1)).toEqual([0, 0, perCell + 2])
  })
})

describe('WindowRecorder, tuned by the control plane', () => {
  it('reports every key at a lowered report floor, and only keys past the new floor', () => {
    const recorder = new WindowRecorder({ topK: 1, capacity: 4, reportFloor: 100 })
    record(recorder, 'a', 9)
    record(recorder, 'b', 3)
    record(recorder, 'c', 2)
    recorder.setReportFloor(3)
    expect(recorder.reportFloor).toBe(3)
    expect(recorder.rollover(1000).hitters.map((h) => h.key)).toEqual(['a', 'b'])
    expect(() => recorder.setReportFloor(0)).toThrow(InvalidSketchOptionError)
  })

  it('keeps the fast path at its own floor when the report floor moves', () => {
    const crossed: string[] = []
    const recorder = new WindowRecorder({
      reportFloor: 50,
      fastFloor: 50,
      onFloorCrossed: (key) => crossed.push(key),
    })
    recorder.setReportFloor(2)
    record(recorder, 'warm', 10)
    expect(crossed).toEqual([])
    record(recorder, 'warm', 40)
    expect(crossed).toEqual(['warm'])
  })

  it('counts a pinned key exactly and reports it whenever it was requested, however low its count', () => {
    const recorder = new WindowRecorder({ topK: 1, capacity: 1, reportFloor: 100 })
    recorder.pin(['thin:hot'])
    record(recorder, 'heavy', 50)
    record(recorder, 'thin:hot', 2)
    record(recorder, 'thin:hot', 1, true)
    // Cold keys that take the one candidate slot in turn cannot evict a pinned key.
    for (let i = 0; i < 100; i++) record(recorder, `cold:${i}`, 1)
    const hitters = recorder.rollover(1000).hitters
    expect(hitters).toContainEqual({ key: 'thin:hot', count: 3, reads: 2, writes: 1, misses: 0, forms: 0 })
    expect(hitters.length).toBe(2)
    // Pinned keys stay pinned into the next window, counted from zero; not reported when not requested.
    record(recorder, 'heavy', 5)
    expect(recorder.rollover(2000).hitters.map((h) => h.key)).toEqual(['heavy'])
    record(recorder, 'thin:hot', 1)
    expect(recorder.rollover(3000).hitters).toContainEqual({
      key: 'thin:hot',
      count: 1,
      reads: 1,
      writes: 0,
      misses: 0,
      forms: 0,
    })
  })

  it('takes over a key already tracked when pinned, and hands an unpinned key back to the sketch', () => {
    const recorder = new WindowRecorder({ topK: 2, capacity: 2, reportFloor: 100, windowStart: 0 })
    record(recorder, 'a', 7)
    recorder.pin(['a'])
    record(recorder, 'a', 3)
    expect(recorder.estimate('a')).toBe(10)
    recorder.pin([])
    // Its count went back into the sketch: the estimate stays an upper bound.
    expect(recorder.estimate('a')).toBeGreaterThanOrEqual(10)
    const pinnedLate = new WindowRecorder({ topK: 1, capacity: 1, reportFloor: 100 })
    record(pinnedLate, 'heavy', 50)
    record(pinnedLate, 'late', 4)
    pinnedLate.pin(['late'])
    record(pinnedLate, 'late', 1)
    const late = pinnedLate.rollover(1000).hitters.find((h) => h.key === 'late')
    expect(late?.count).toBeGreaterThanOrEqual(5)
    expect(late?.reads).toBe(1)
  })
})

describe('WindowRecorder, counting through a pinned candidate', () => {
  it('counts through a kept candidate exactly as by name, across windows, and says when the key is no longer pinned', () => {
    const byName = new WindowRecorder({ topK: 2, capacity: 2, reportFloor: 100 })
    const byCandidate = new WindowRecorder({ topK: 2, capacity: 2, reportFloor: 100 })
    for (const recorder of [byName, byCandidate]) recorder.pin(['hot'])
    expect(byName.pinnedCandidate('cold')).toBeUndefined()
    const candidate = byCandidate.pinnedCandidate('hot')
    if (candidate === undefined) throw new Error('a pinned key has a candidate')
    for (let window = 1; window <= 2; window++) {
      for (let i = 0; i < 7; i++) {
        byName.record('hot', false, 4)
        byCandidate.recordPinned(candidate, false, 4)
      }
      byName.record('hot', true)
      byCandidate.recordPinned(candidate, true, 0)
      const [a, b] = [byName.rollover(window * 1000), byCandidate.rollover(window * 1000)]
      expect(b.hitters).toEqual(a.hitters)
      expect(b.total).toBe(a.total)
      expect(b.hitters).toContainEqual({ key: 'hot', count: 8, reads: 7, writes: 1, misses: 0, forms: 4 })
    }
    expect(candidate.pinned).toBe(true)
    byCandidate.pin([])
    expect(candidate.pinned).toBe(false)
    expect(byCandidate.pinnedCandidate('hot')).toBeUndefined()
  })
})

describe('WindowRecorder, error sampling', () => {
  it("counts a fingerprint-chosen share of keys exactly, through admissions and evictions, beside the sketch's estimates", () => {
    const recorder = new WindowRecorder({ errorSampling: 16, capacity: 64, topK: 8, width: 256 })
    const stream = zipfStream({ length: 200_000, keys: 20_000, s: 1.1, seed: 3 })
    for (const key of stream) recorder.record(key)
    const truth = exactCounts(stream)
    const { errorSample, total } = recorder.rollover(1000)
    if (errorSample === undefined) throw new Error('no error sample')
    // About one key in 16 of those requested.
    expect(errorSample.sampled).toBeGreaterThan(truth.size / 16 / 1.5)
    expect(errorSample.sampled).toBeLessThan((truth.size / 16) * 1.5)
    for (const { key, estimate, exact } of errorSample.keys) {
      expect(exact).toBe(truth.get(key))
      expect(estimate).toBeGreaterThanOrEqual(exact)
    }
    expect(errorSample.bound).toBeCloseTo((Math.E / 256) * total)
    expect(errorSample.maxRelativeError).toBeGreaterThanOrEqual(errorSample.meanRelativeError)
    // A narrow sketch under 200,000 requests overcounts, but rarely beyond its bound (e^-4 = 1.8% of keys).
    expect(errorSample.overBound / errorSample.sampled).toBeLessThan(0.05)
    // Every recorder with the same seed samples the same keys, so agents' samples describe the same keys.
    const other = new WindowRecorder({ errorSampling: 16, capacity: 64, topK: 8, width: 256 })
    for (const key of stream.slice(0, 50_000)) other.record(key)
    const again = other.rollover(1000).errorSample?.keys.map((k) => k.key) ?? []
    const first = new Set(errorSample.keys.map((k) => k.key))
    for (const key of again) expect(first.has(key)).toBe(true)
  })

  it('is off by default, and refuses a share that is not a power of two', () => {
    const recorder = new WindowRecorder()
    recorder.record('a')
    expect(recorder.rollover(1000).errorSample).toBeUndefined()
    expect(() => new WindowRecorder({ errorSampling: 100 })).toThrow(InvalidSketchOptionError)
  })
})

describe('WindowRecorder, command forms', () => {
  it('ORs the forms of a tracked key over its window, reports them, and starts each window with none', () => {
    const recorder = new WindowRecorder({ reportFloor: 1 })
    recorder.record('likes', true, 1)
    recorder.record('likes', true, 1)
    recorder.record('likes', false, 2)
    recorder.recordForms('likes', 8)
    expect(recorder.peek()).toEqual([expect.objectContaining({ key: 'likes', forms: 1 | 2 | 8 })])
    expect(recorder.rollover(1000).hitters[0]?.forms).toBe(11)
    recorder.record('likes', true, 1)
    expect(recorder.rollover(2000).hitters[0]?.forms).toBe(1)
  })

  it('keeps no forms for a key before it is tracked (deferred cold keys cost nothing more)', async () => {
    const recorder = new WindowRecorder({ reportFloor: 1, deferColdKeys: true })
    expect(recorder.record('cold', false, 4)).toBe(0)
    recorder.recordForms('cold', 4)
    await new Promise((resolve) => setImmediate(resolve))
    recorder.record('cold', false, 2)
    expect(recorder.peek()).toEqual([expect.objectContaining({ key: 'cold', count: 2, forms: 2 })])
  })
})
