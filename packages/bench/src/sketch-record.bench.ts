import { WindowRecorder } from '@heatsink/sketch'
import { uniformStream, zipfStream } from '@heatsink/workload'
import { type Measurement, measure } from './harness.js'
import type { ResultRow } from './results.js'

const STREAM_LENGTH = 1_000_000
const KEYS = 100_000

interface Workload {
  label: string
  /** Request i's key; `fresh` workloads build the string per request, as application code does. */
  keyAt: (i: number) => string
}

function prebuilt(label: string, stream: readonly string[]): Workload {
  return { label, keyAt: (i) => stream[i] as string }
}

/**
 * Recording one request in the sketch, hashing and candidate upkeep included, for keys like `product:12345`,
 * against the obvious alternative: an exact Map counter, which costs memory per distinct key. Five workloads:
 * 100k keys whose strings already exist (memory-bound: the strings do not fit in cache), the same keys built
 * fresh per request as an application does (no cached string hash), 1,000 keys that stay in cache, and uniform
 * traffic over 100k short names and over 10k long ones.
 */
export function benchSketchRecord(): ResultRow[] {
  const zipf = zipfStream({ length: STREAM_LENGTH, keys: KEYS, s: 1.1, seed: 1 })
  const ids = Int32Array.from(zipf, (key) => Number(key.slice('product:'.length)))
  const workloads: Workload[] = [
    prebuilt('zipf 1.1, 100k keys', zipf),
    { label: 'zipf 1.1, 100k keys built per request', keyAt: (i) => `product:${ids[i]}` },
    prebuilt('zipf 1.1, 1k keys', zipfStream({ length: STREAM_LENGTH, keys: 1000, s: 1.1, seed: 1 })),
    prebuilt('uniform, 100k keys', uniformStream({ length: STREAM_LENGTH, keys: KEYS, seed: 1 })),
    // Names of 40-odd characters, as a namespaced application's: hashed from their UTF-8 bytes (key-hasher.ts).
    prebuilt(
      'uniform, 10k keys of 40+ characters',
      uniformStream({
        length: STREAM_LENGTH,
        keys: 10_000,
        seed: 1,
        keyName: (i) => `checkout-service:tenant-42:cart:${i}:lines`,
      }),
    ),
  ]
  const rows: ResultRow[] = []
  for (const { label, keyAt } of workloads) {
    const recorder = new WindowRecorder()
    const map = new Map<string, number>()
    let position = 0
    let mapPosition = 0
    // Interleave the two so that machine noise hits both alike; take the better of three rounds each.
    const sketchRuns: Measurement[] = []
    const mapRuns: Measurement[] = []
    for (let round = 0; round < 3; round++) {
      sketchRuns.push(
        measure(
          'sketch',
          (ops) => {
            for (let i = 0; i < ops; i++) {
              recorder.record(keyAt(position))
              if (++position === STREAM_LENGTH) {
                position = 0
                recorder.rollover(0)
              }
            }
          },
          { opsPerBatch: 100_000 },
        ),
      )
      mapRuns.push(
        measure(
          'map',
          (ops) => {
            for (let i = 0; i < ops; i++) {
              const key = keyAt(mapPosition)
              map.set(key, (map.get(key) ?? 0) + 1)
              if (++mapPosition === STREAM_LENGTH) {
                mapPosition = 0
                map.clear()
              }
            }
          },
          { opsPerBatch: 100_000 },
        ),
      )
    }
    const sketch = best(sketchRuns)
    const plain = best(mapRuns)
    rows.push({
      benchmark: `sketch record (${label})`,
      heatsink: `${sketch.nsPerOp.toFixed(1)} ns/op median, ${(sketch.opsPerSec / 1e6).toFixed(1)} M ops/s`,
      baseline: 'Map counter',
      baselineFigure: `${plain.nsPerOp.toFixed(1)} ns/op`,
      ratio: sketch.nsPerOp / plain.nsPerOp,
      note: 'time per request; below 1 is faster than the Map',
    })
  }
  return rows
}

function best(runs: readonly Measurement[]): Measurement {
  return runs.reduce((a, b) => (b.nsPerOp < a.nsPerOp ? b : a))
}
