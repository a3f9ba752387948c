import { ensureDebianPackage } from '@heatsink/devservices'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compareModes, formatComparison, type ModeSummary } from './src/comparison.js'
import { SLOW_SKIPS, SUITE_LIMITS } from './src/suite-limits.js'
import { runSuite, type UnitModeRun } from './src/suite-run.js'
import { PROXY_MODES, UNITS } from './src/units.js'

// Redis 7.0.15's own suite, 18 units, directly and through the proxy in three modes (README.md). Units run three
// at a time, each on a fresh redis-server (and proxy, and aggregator) of its own, all stopped when it ends.
const CONCURRENCY = 3
// The slowest tests through the proxy are left to `pnpm redis-suite`, which runs every one (suite-limits.ts).
const LIMITS = [...SUITE_LIMITS, ...SLOW_SKIPS]

let runs: UnitModeRun[] = []
let summaries: ModeSummary[] = []
let wallSeconds = 0

beforeAll(async () => {
  const databaseUrl = process.env.DATABASE_URL
  if (databaseUrl === undefined) throw new Error('DATABASE_URL is not set (the global setup publishes it)')
  // runtest is a Tcl program.
  ensureDebianPackage('/usr/bin/tclsh8.6', 'tcl8.6')
  const started = performance.now()
  runs = await runSuite({
    units: UNITS,
    modes: ['direct', ...PROXY_MODES],
    concurrency: CONCURRENCY,
    databaseUrl,
    limits: LIMITS,
  })
  wallSeconds = (performance.now() - started) / 1000
  summaries = compareModes(runs, LIMITS)
})

afterAll(() => {
  // The comparison table, per unit and mode, for the log; `pnpm redis-suite` prints the same.
  console.log(`${formatComparison(summaries)}\n\n${runs.length} unit runs in ${wallSeconds.toFixed(0)} s`)
})

const runOf = (unit: string, mode: string) => runs.find((run) => run.unit === unit && run.mode === mode)

describe.each(UNITS)('%s', (unit) => {
  it('runs to its end directly, with every test passing or skipped', () => {
    const run = runOf(unit, 'direct')
    expect(run?.aborted ?? null).toBeNull()
    expect(run?.crashes).toEqual([])
    expect(run?.results.filter((result) => result.status === 'ok').length).toBeGreaterThan(0)
    const failed = run?.results.filter((result) => result.status !== 'ok' && result.status !== 'skipped')
    expect(failed?.map((result) => `${result.name}: ${result.detail}`)).toEqual([])
  })

  it.each(PROXY_MODES)(
    'passes through the proxy (%s) every test it passes directly, but documented limits',
    (mode) => {
      const summary = summaries.find((candidate) => candidate.mode === mode)
      const unexpected = summary?.failed.filter(
        (failure) => failure.unit === unit && failure.limit === undefined,
      )
      const failures =
        unexpected?.map((failure) => `${failure.status}: ${failure.test}: ${failure.detail}`) ?? []
      // A unit that ended early leaves its remaining tests "not run": how it ended, and runtest's last words, say why.
      expect(failures.length === 0 ? [] : [...howItEnded(runOf(unit, mode)), ...failures]).toEqual([])
    },
  )
})

function howItEnded(run: UnitModeRun | undefined): string[] {
  if (run === undefined) return ['the unit never ran in this mode']
  if (run.aborted === null && run.crashes.length === 0) return []
  const tail = run.output.trimEnd().split('\n').slice(-30).join('\n')
  const aborted = run.aborted === null ? '' : `aborted (${run.aborted.kind}): ${run.aborted.detail}; `
  return [`${aborted}crashes: ${run.crashes.join('; ') || 'none'}; runtest's output ended:\n${tail}`]
}
