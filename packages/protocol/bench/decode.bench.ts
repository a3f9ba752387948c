// Decode throughput on the aggregator's ingest path. Run: pnpm exec vitest bench --run --project protocol
// (from the repository root). Entries per second = reported hz x CANDIDATES.
import { bench, describe } from 'vitest'
import { decodeReport, encodeReport, safeDecodeReport, WIRE_VERSION } from '../src/index.js'

const CANDIDATES = 100

const text = encodeReport({
  v: WIRE_VERSION,
  kind: 'report',
  agentId: 'checkout-7f9c4d-2',
  seq: 123_456,
  windowStart: 1_700_000_000_000,
  windowMs: 1000,
  total: 250_000,
  dropped: 0,
  candidates: Array.from({ length: CANDIDATES }, (_, i) => ({
    key: `product:${100_000 + i}:detail`,
    count: 5000 - i * 13,
    reads: 4800 - i * 13,
    writes: i % 7,
  })),
  hotKeyStats: [],
})

describe(`report with ${CANDIDATES} candidates (${text.length} bytes)`, () => {
  bench('JSON.parse only (floor)', () => {
    JSON.parse(text)
  })
  bench('decodeReport', () => {
    decodeReport(text)
  })
  bench('safeDecodeReport', () => {
    safeDecodeReport(text)
  })
})
