import { decodeReport, encodeReport, WIRE_VERSION } from '@heatsink/protocol'
import { measure } from './harness.js'
import type { ResultRow } from './results.js'

const CANDIDATES = 100

/**
 * Decoding one agent report on the aggregator's ingest path (JSON, wire-version check, zod validation),
 * against JSON.parse alone, the floor any validated decoder stands on.
 */
export function benchReportDecode(): ResultRow[] {
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
  let sink = 0
  const decoded = measure(
    'decodeReport',
    (ops) => {
      for (let i = 0; i < ops; i++) sink += decodeReport(text).candidates.length
    },
    { opsPerBatch: 500, batches: 31 },
  )
  const parsed = measure(
    'JSON.parse',
    (ops) => {
      for (let i = 0; i < ops; i++) sink += (JSON.parse(text) as { candidates: unknown[] }).candidates.length
    },
    { opsPerBatch: 500, batches: 31 },
  )
  if (sink === 0) throw new Error('unreachable: keeps the decode from being optimised away')
  const entriesPerSec = (m: { nsPerOp: number }) => (CANDIDATES * 1e9) / m.nsPerOp
  return [
    {
      benchmark: `report decode (${CANDIDATES} candidates, ${text.length} bytes)`,
      heatsink: `${(entriesPerSec(decoded) / 1e6).toFixed(2)} M entries/s (${(decoded.nsPerOp / 1000).toFixed(1)} µs/report)`,
      baseline: 'JSON.parse alone',
      baselineFigure: `${(entriesPerSec(parsed) / 1e6).toFixed(2)} M entries/s`,
      ratio: decoded.nsPerOp / parsed.nsPerOp,
      note: 'time per report; the price of validation over parsing',
    },
  ]
}
