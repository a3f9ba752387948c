import { parseArgs } from 'node:util'
import { ensurePostgres, ensureRedis } from '@heatsink/devservices'
import { benchAggregatorIngest } from './aggregator-ingest.bench.js'
import { benchClusterSlot } from './cluster-slot.bench.js'
import { benchDetectionLatency } from './detection-latency.bench.js'
import { benchFleetDetection } from './fleet-detection.bench.js'
import { benchFrontDoorL1Hit } from './front-door-l1-hit.bench.js'
import { benchFrontDoorPassThrough } from './front-door-pass-through.bench.js'
import { benchFrontDoorSplitIncr } from './front-door-split-incr.bench.js'
import { benchFrontDoorSplitRead } from './front-door-split-read.bench.js'
import { benchInstructions } from './instructions.bench.js'
import { benchL1Hit } from './l1-hit.bench.js'
import { benchNodeSampling } from './node-sampling.bench.js'
import { benchOffload } from './offload.bench.js'
import { benchPassThrough } from './pass-through.bench.js'
import { benchProxy } from './proxy.bench.js'
import { benchProxyCpu } from './proxy-cpu.bench.js'
import { benchReportDecode } from './report-decode.bench.js'
import { printRow, type ResultRow, saveRows } from './results.js'
import { benchSketchRecord } from './sketch-record.bench.js'
import { benchSplit } from './split.bench.js'

/** Every benchmark by name, in the order `pnpm bench` runs them; `node dist/run.js <name>` runs one. */
const benchmarks: Record<string, () => ResultRow[] | Promise<ResultRow[]>> = {
  'sketch-record': benchSketchRecord,
  'l1-hit': benchL1Hit,
  'pass-through': benchPassThrough,
  offload: benchOffload,
  'detection-latency': benchDetectionLatency,
  'fleet-detection': benchFleetDetection,
  'report-decode': benchReportDecode,
  'aggregator-ingest': benchAggregatorIngest,
  // Loaded lazily so bentocache is imported only when its comparison runs.
  stampede: () => import('./stampede.bench.js').then((bench) => bench.benchStampede()),
  split: benchSplit,
  'front-door-pass-through': benchFrontDoorPassThrough,
  'front-door-l1-hit': benchFrontDoorL1Hit,
  'front-door-split-read': benchFrontDoorSplitRead,
  'front-door-split-incr': benchFrontDoorSplitIncr,
  proxy: benchProxy,
  'proxy-cpu': benchProxyCpu,
  instructions: benchInstructions,
  'cluster-slot': benchClusterSlot,
  'node-sampling': benchNodeSampling,
}

const only = benchmarkToRun(process.argv.slice(2))
// Real services, found or started as the tests do: REDIS_URL / DATABASE_URL, else 127.0.0.1, else private ones.
const redis = await ensureRedis({ log: (message) => console.log(message) })
const postgres = await ensurePostgres({ log: (message) => console.log(message) })
process.env.REDIS_URL = redis.url
process.env.DATABASE_URL = postgres.url
const rows: ResultRow[] = []
try {
  for (const [name, run] of Object.entries(benchmarks)) {
    if (only !== undefined && name !== only) continue
    for (const row of await run()) {
      printRow(row)
      rows.push(row)
    }
  }
} finally {
  await redis.stop()
  await postgres.stop()
}
console.log(`results written to ${saveRows(rows, { merge: only !== undefined })}`)

/** The one benchmark named on the command line, or undefined for all; exits 2 naming what it cannot use. */
function benchmarkToRun(args: string[]): string | undefined {
  const known = Object.keys(benchmarks).join(', ')
  try {
    // Strict: an unknown flag such as `--proxy` is an error naming it rather than a run of everything.
    const { positionals, values } = parseArgs({
      args,
      options: { base: { type: 'string' } },
      strict: true,
      allowPositionals: true,
    })
    // --base <dir>: a built checkout that proxy-cpu and instructions compare with (HEATSINK_BENCH_BASE).
    if (values.base !== undefined) process.env.HEATSINK_BENCH_BASE = values.base
    if (positionals.length > 1) throw new Error(`one benchmark at a time, got ${positionals.join(' ')}`)
    const only = positionals[0]
    if (only !== undefined && !(only in benchmarks)) throw new Error(`unknown benchmark ${only}`)
    return only
  } catch (error) {
    console.error(`${(error as Error).message}; known: ${known}`)
    process.exit(2)
  }
}
