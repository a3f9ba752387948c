import { describe, expect, it } from 'vitest'
import { compareModes, formatComparison, unexpectedFailures } from './comparison.js'
import type { TestResult, TestStatus } from './runtest-output.js'
import type { SuiteLimit } from './suite-limits.js'
import type { UnitModeRun } from './suite-run.js'
import type { Mode } from './units.js'

const result = (name: string, status: TestStatus, detail = ''): TestResult => ({ name, status, detail })
const run = (mode: Mode, results: readonly TestResult[], extra: Partial<UnitModeRun> = {}): UnitModeRun => ({
  unit: 'unit/multi',
  mode,
  results,
  aborted: null,
  crashes: [],
  mitigations: [],
  elapsedMs: 1,
  output: '',
  ...extra,
})

const direct = run('direct', [
  result('MULTI with PING', 'ok'),
  result('EXEC works', 'ok'),
  result('DISCARD', 'ok'),
  result('MULTI with config set appendonly', 'skipped', 'Tag: needs:repl denied'),
])
const pingLimit: SuiteLimit = {
  unit: 'unit/multi',
  test: '/^MULTI with PING$',
  modes: ['proxy'],
  reason: 'open: PING inside MULTI is answered at once',
}

describe('compareModes', () => {
  it('fails a test that passes directly and not through the proxy, unless a limit for that mode names it', () => {
    const proxy = run(
      'proxy',
      [result('MULTI with PING', 'err', "Expected 'QUEUED'"), result('EXEC works', 'ok')],
      {
        aborted: { kind: 'exception', detail: 'I/O error reading reply' },
      },
    )
    const summaries = compareModes([direct, proxy], [pingLimit])
    const summary = summaries.find((s) => s.mode === 'proxy')
    expect(summary?.passed).toBe(1)
    expect(summary?.failed.map((f) => [f.test, f.status, f.limit?.reason])).toEqual([
      ['MULTI with PING', 'err', pingLimit.reason],
      ['DISCARD', 'not run', undefined],
    ])
    expect(summary?.skipped).toEqual(new Map([['Tag: needs:repl denied', 1]]))
    expect(summary?.incidents).toEqual(['unit/multi: exception: I/O error reading reply'])
    expect(unexpectedFailures(summaries).map((f) => f.test)).toEqual(['DISCARD'])
  })

  it('does not let a limit of one mode excuse the same test in another, and reports limits a run did not need', () => {
    const passing = direct.results
    const summaries = compareModes(
      [
        direct,
        run('proxy', passing),
        run('auto', [result('MULTI with PING', 'timeout'), ...passing.slice(1)]),
      ],
      [pingLimit],
    )
    expect(unexpectedFailures(summaries).map((f) => `${f.test} (${f.status})`)).toEqual([
      'MULTI with PING (timeout)',
    ])
    expect(summaries.find((s) => s.mode === 'proxy')?.unused).toEqual([pingLimit])
    const table = formatComparison(summaries)
    expect(table).toContain('| proxy | 3 | 0 (0 / 0) | 1 |')
    expect(table).toContain('| auto | 2 | 1 (0 / 1) | 1 |')
  })
})
