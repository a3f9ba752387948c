import { describe, expect, it } from 'vitest'
import { decodeReport, encodeReport, MAX_WATCH_ABORT_KEYS, readWatchAborts } from '../src/index.js'
import { report } from './fixtures.js'

describe("a report's watchAborts", () => {
  it('travels in the report and reads back as [key, transactions]', () => {
    const decoded = decodeReport(encodeReport({ ...report(1), watchAborts: [['account:7', 12]] }))
    expect(readWatchAborts(decoded)).toEqual([['account:7', 12]])
    expect(readWatchAborts(decodeReport(encodeReport(report(1))))).toEqual([])
  })

  it('is set aside alone when malformed: the rest of the report still decodes', () => {
    for (const bad of [
      [['account:7', -1]],
      [['', 3]],
      'account:7',
      Array.from({ length: MAX_WATCH_ABORT_KEYS + 1 }, (_, i) => [`k${i}`, 1]),
    ]) {
      const decoded = decodeReport(encodeReport({ ...report(2), watchAborts: bad }))
      expect(decoded.candidates).toHaveLength(2)
      expect(readWatchAborts(decoded)).toBe('malformed')
    }
  })

  it('is a field an aggregator that predates it ignores: a report schema drops the fields it does not know', () => {
    // What an older aggregator does with watchAborts, shown with a field this one does not know.
    const text = JSON.stringify({ ...report(1), fieldFromTheFuture: [['account:7', 12]] })
    const decoded = decodeReport(text)
    expect(decoded.candidates).toHaveLength(1)
    expect(decoded).not.toHaveProperty('fieldFromTheFuture')
  })
})
