import type { TestResult } from './runtest-output.js'
import { limitMatches, SUITE_LIMITS, SUITE_SKIPS, type SuiteLimit } from './suite-limits.js'
import type { UnitModeRun } from './suite-run.js'
import { MODES, type Mode } from './units.js'

/** A test that passed directly and did not pass in a proxy mode. */
export interface ModeFailure {
  readonly unit: string
  readonly test: string
  /** err, exception, timeout, or `not run` when the unit ended before it. */
  readonly status: string
  readonly detail: string
  /** The documented limit that allows it; undefined: an unexpected failure. */
  readonly limit?: SuiteLimit
}

/** One mode's line of the table. */
export interface ModeSummary {
  readonly mode: Mode
  readonly passed: number
  /** In direct mode: tests that failed directly (not compared); otherwise tests that passed directly only. */
  readonly failed: readonly ModeFailure[]
  /** Skips by reason. */
  readonly skipped: ReadonlyMap<string, number>
  /** `<unit>: <how it ended>` for units that did not run to their end, and processes that crashed. */
  readonly incidents: readonly string[]
  /** Limits for this mode that matched no failing test in this run. */
  readonly unused: readonly SuiteLimit[]
  /** `<unit>: local_cache 12, split x2 1`: what the control plane applied, per unit that had any. */
  readonly mitigations: readonly string[]
}

/** Holds every proxy mode's results against the direct run's, unit by unit. */
export function compareModes(runs: readonly UnitModeRun[], limits = SUITE_LIMITS): ModeSummary[] {
  const direct = new Map(runs.filter((run) => run.mode === 'direct').map((run) => [run.unit, run]))
  const modes = MODES.filter((mode) => runs.some((run) => run.mode === mode))
  return modes.map((mode) => {
    const failed: ModeFailure[] = []
    const skipped = new Map<string, number>()
    const incidents: string[] = []
    const mitigations: string[] = []
    let passed = 0
    for (const run of runs.filter((candidate) => candidate.mode === mode)) {
      if (run.mitigations.length > 0) mitigations.push(`${run.unit}: ${tally(run.mitigations)}`)
      if (run.aborted !== null)
        incidents.push(`${run.unit}: ${run.aborted.kind}: ${firstLine(run.aborted.detail)}`)
      for (const crash of run.crashes) incidents.push(`${run.unit}: ${firstLine(crash)}`)
      const byName = new Map(run.results.map((result) => [result.name, result]))
      const baseline = mode === 'direct' ? run.results : (direct.get(run.unit)?.results ?? [])
      for (const expected of baseline) {
        const actual = byName.get(expected.name)
        if (expected.status === 'skipped' || actual?.status === 'skipped') {
          const skip = (actual?.status === 'skipped' ? actual : expected) as TestResult
          const reason = skipReason(run.unit, skip, mode, limits)
          skipped.set(reason, (skipped.get(reason) ?? 0) + 1)
        } else if (actual?.status === 'ok') {
          passed++
        } else if (mode === 'direct' || expected.status === 'ok') {
          const limit = limits.find((l) => l.modes.includes(mode) && limitMatches(l, run.unit, expected.name))
          const status = actual?.status ?? 'not run'
          failed.push({ unit: run.unit, test: expected.name, status, detail: actual?.detail ?? '', limit })
        }
      }
    }
    const used = new Set(failed.flatMap((failure) => (failure.limit === undefined ? [] : [failure.limit])))
    const unused = limits.filter((limit) => limit.modes.includes(mode) && !limit.skip && !used.has(limit))
    return { mode, passed, failed, skipped, incidents, unused, mitigations }
  })
}

/** The failures no documented limit allows, in the proxy modes. */
export function unexpectedFailures(summaries: readonly ModeSummary[]): ModeFailure[] {
  return summaries
    .filter((s) => s.mode !== 'direct')
    .flatMap((s) => s.failed.filter((f) => f.limit === undefined))
}

/** The table for the closing note: a line per mode, then each mode's failures, skips and incidents. */
export function formatComparison(summaries: readonly ModeSummary[]): string {
  const lines = [
    '| mode | passed | failed (documented limits / unexpected) | skipped |',
    '| --- | ---: | ---: | ---: |',
  ]
  for (const s of summaries) {
    const limited = s.failed.filter((f) => f.limit !== undefined).length
    const skipped = [...s.skipped.values()].reduce((sum, n) => sum + n, 0)
    lines.push(
      `| ${s.mode} | ${s.passed} | ${s.failed.length} (${limited} / ${s.failed.length - limited}) | ${skipped} |`,
    )
  }
  for (const s of summaries) {
    lines.push('', `${s.mode}:`)
    for (const [reason, count] of [...s.skipped].sort(([, a], [, b]) => b - a)) {
      lines.push(`  skipped ${count}: ${reason}`)
    }
    for (const f of s.failed) {
      const why = f.limit === undefined ? `UNEXPECTED: ${firstLine(f.detail)}` : `limit: ${f.limit.reason}`
      lines.push(`  ${f.status} ${f.unit} > ${f.test} (${why})`)
    }
    for (const incident of s.incidents) lines.push(`  incident ${incident}`)
    for (const applied of s.mitigations) lines.push(`  mitigations ${applied}`)
    for (const limit of s.unused) lines.push(`  limit not needed this run: ${limit.unit} > ${limit.test}`)
  }
  return lines.join('\n')
}

function skipReason(unit: string, result: TestResult, mode: Mode, limits: readonly SuiteLimit[]): string {
  if (result.detail !== 'skipfile') return result.detail
  const limit = [...SUITE_SKIPS, ...limits].find(
    (l) => l.skip && l.modes.includes(mode) && limitMatches(l, unit, result.name),
  )
  return limit?.reason ?? 'skipfile'
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? ''
  )
}

// `local_cache 12, split x2 1`, most frequent first.
function tally(items: readonly string[]): string {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1)
  return [...counts]
    .sort(([, a], [, b]) => b - a)
    .map(([item, count]) => `${item} ${count}`)
    .join(', ')
}
