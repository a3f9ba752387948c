import { createRequire } from 'node:module'
import { redisClusterSlot } from '@heatsink/protocol'
import { type Measurement, measure } from './harness.js'
import type { ResultRow } from './results.js'

// cluster-key-slot (ioredis' own CRC16 for Redis Cluster) is CommonJS without types.
const require = createRequire(import.meta.url)
const clusterKeySlot: (key: string | Buffer) => number = require('cluster-key-slot')

const KEYS = 1024
const ROUNDS = 7

interface KeyShape {
  label: string
  keys: string[]
}

// Distinct keys per shape, cycled, so neither function sees one constant input the JIT could fold.
function shapes(): KeyShape[] {
  const ids = Array.from({ length: KEYS }, (_, i) => 100_000 + i * 7919)
  const pad = (text: string) => text.padEnd(64, ':detail-and-more-context-x')
  return [
    { label: 'short', keys: ids.map((id) => `user:${id}`) },
    { label: 'short {tag}', keys: ids.map((id) => `{user:${id}}:cart`) },
    { label: '64-byte', keys: ids.map((id) => pad(`catalog:v2:eu-west-1:product:${id}`)) },
    { label: '64-byte {tag}', keys: ids.map((id) => pad(`catalog:v2:{product:${id}}:eu-west-1`)) },
  ]
}

/**
 * The Redis Cluster slot of a key, as the proxy computes it for every command on a Cluster backend (Buffers) and
 * the agent for every tracked or split key (strings): Heatsink's hand-written CRC16 against cluster-key-slot, the
 * library ioredis itself uses. The two alternate in rounds, so that machine noise hits both alike, and each
 * figure is the median of the rounds' medians.
 */
export function benchClusterSlot(): ResultRow[] {
  const rows: ResultRow[] = []
  for (const { label, keys } of shapes()) {
    const buffers = keys.map((key) => Buffer.from(key))
    for (const [kind, inputs] of [
      ['string', keys],
      ['Buffer', buffers],
    ] as const) {
      const ours: Measurement[] = []
      const library: Measurement[] = []
      let sink = 0
      const run = (slot: (key: string | Buffer) => number) => (ops: number) => {
        for (let i = 0; i < ops; i++) sink += slot(inputs[i & (KEYS - 1)] as string | Buffer)
      }
      for (let round = 0; round < ROUNDS; round++) {
        ours.push(measure('heatsink', run(redisClusterSlot), { opsPerBatch: 50_000, batches: 21 }))
        library.push(measure('cluster-key-slot', run(clusterKeySlot), { opsPerBatch: 50_000, batches: 21 }))
      }
      if (sink === 0) throw new Error('unreachable: keeps the slots from being optimised away')
      const oursNs = medianOf(ours)
      const libraryNs = medianOf(library)
      rows.push({
        benchmark: `cluster slot (${label} key, ${kind})`,
        heatsink: `${oursNs.toFixed(1)} ns/op`,
        baseline: 'cluster-key-slot',
        baselineFigure: `${libraryNs.toFixed(1)} ns/op`,
        ratio: oursNs / libraryNs,
        note: `time per key, lower is better; median of ${ROUNDS} interleaved rounds`,
      })
    }
  }
  return rows
}

function medianOf(runs: readonly Measurement[]): number {
  const sorted = runs.map((run) => run.nsPerOp).sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}
