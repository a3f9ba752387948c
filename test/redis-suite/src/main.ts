#!/usr/bin/env node
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ensurePostgres } from '@heatsink/devservices'
import { compareModes, formatComparison, unexpectedFailures } from './comparison.js'
import { describeRun, runSuite } from './suite-run.js'
import { MODES, type Mode, UNITS, type Unit } from './units.js'

// `pnpm redis-suite [--units unit/type/list,unit/sort] [--modes direct,proxy] [--concurrency 3] [--output DIR]`:
// runs Redis's own suite in each mode, prints the comparison table, and exits 1 when a test that passes directly
// fails through the proxy without a documented limit. --output keeps runtest's output, a file per unit and mode.

const { values } = parseArgs({
  options: {
    units: { type: 'string' },
    modes: { type: 'string' },
    concurrency: { type: 'string', default: '3' },
    output: { type: 'string' },
  },
})
const units = pick(values.units, UNITS, 'unit')
const modes = pick(values.modes, MODES, 'mode')
if (!modes.includes('direct'))
  throw new Error('--modes must include direct: the other modes are compared with it')

// 'exit' handlers stop every server, proxy and runtest this run started; a signal would skip them.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))

const postgres = await ensurePostgres()
const started = performance.now()
try {
  const runs = await runSuite({
    units: units as Unit[],
    modes: modes as Mode[],
    concurrency: Number(values.concurrency),
    databaseUrl: postgres.url,
    onRun: (run) => {
      console.log(describeRun(run))
      if (values.output === undefined) return
      mkdirSync(values.output, { recursive: true })
      const file = join(values.output, `${run.mode}-${run.unit.replaceAll('/', '_')}.log`)
      writeFileSync(
        file,
        [run.output, run.aborted?.detail ?? '', ...run.crashes, ...run.mitigations].join('\n'),
      )
    },
  })
  const summaries = compareModes(runs)
  console.log(`\n${formatComparison(summaries)}`)
  console.log(`\n${runs.length} unit runs in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  process.exitCode = unexpectedFailures(summaries).length === 0 ? 0 : 1
} finally {
  await postgres.stop()
}

function pick<T extends string>(list: string | undefined, known: readonly T[], what: string): T[] {
  if (list === undefined) return [...known]
  const picked = list.split(',').map((item) => item.trim())
  const unknown = picked.filter((item) => !known.includes(item as T))
  if (unknown.length > 0)
    throw new Error(`unknown ${what}: ${unknown.join(', ')} (known: ${known.join(', ')})`)
  return picked as T[]
}
