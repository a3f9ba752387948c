import { describe, expect, it } from 'vitest'
import { parseRuntestOutput } from './runtest-output.js'

// Lines as runtest 7.0.15 prints them, colours included.
const green = (word: string) => `[\u001b[0;32;49m${word}\u001b[0m]`
const red = (word: string) => `[\u001b[0;31;49m${word}\u001b[0m]`

describe('parseRuntestOutput', () => {
  it('reads ok, err, skip and ignore lines, numbering repeated names', () => {
    const output = [
      '[ready]: 1234',
      'Testing unit/type/incr',
      `${green('ok')}: INCR against non existing key (1 ms)`,
      `${red('err')}: INCR fails against key with spaces (left) in tests/unit/type/incr.tcl`,
      "Expected 'ERR*' to equal or match '1'",
      `${green('ok')}: INCR against non existing key (0 ms)`,
      '[\u001b[0;33;49mskip\u001b[0m]: SRANDMEMBER with a dict containing long chain',
      '[\u001b[0;36;49mignore\u001b[0m]: allow-stale shebang flag: Not supported on external server',
      '[\u001b[0;36;49mignore\u001b[0m]: not enough good replicas state change: Tag: needs:repl denied',
      '[1/1 \u001b[0;33;49mdone\u001b[0m]: unit/type/incr (0 seconds)',
      '',
      '                   The End',
    ].join('\n')
    expect(parseRuntestOutput(output)).toEqual({
      aborted: null,
      results: [
        { name: 'INCR against non existing key', status: 'ok', detail: '' },
        {
          name: 'INCR fails against key with spaces (left)',
          status: 'err',
          detail: "Expected 'ERR*' to equal or match '1'",
        },
        { name: 'INCR against non existing key (run 2)', status: 'ok', detail: '' },
        { name: 'SRANDMEMBER with a dict containing long chain', status: 'skipped', detail: 'skipfile' },
        { name: 'allow-stale shebang flag', status: 'skipped', detail: 'Not supported on external server' },
        {
          name: 'not enough good replicas state change',
          status: 'skipped',
          detail: 'Tag: needs:repl denied',
        },
      ],
    })
  })

  it('tells an exception inside a test (--durable) from a failed assertion by its Tcl stack trace', () => {
    const output = [
      `${red('err')}: EVAL - cmsgpack can pack double? in tests/unit/scripting.tcl`,
      'I/O error reading reply',
      '    while executing',
      '"r eval {...} 0"',
    ].join('\n')
    const [result] = parseRuntestOutput(output).results
    expect(result?.status).toBe('exception')
    expect(result?.detail).toMatch(/^I\/O error reading reply/)
  })

  it('reports an error outside any test (--durable) as the unit ending', () => {
    const outcome = parseRuntestOutput(`${red('err')}: Expected '' to match 'intset'\nassertion:Expected`)
    expect(outcome).toEqual({
      results: [],
      aborted: { kind: 'exception', detail: "Expected '' to match 'intset'\nassertion:Expected" },
    })
  })

  it('reports an exception outside any test, and a TIMEOUT with the test in progress, as the unit ending', () => {
    const exception = parseRuntestOutput(
      `${red('exception')}: Executing test client: I/O error reading reply\ntrace`,
    )
    expect(exception.aborted).toEqual({
      kind: 'exception',
      detail: 'Executing test client: I/O error reading reply\ntrace',
    })
    const timeout = parseRuntestOutput(
      [
        `${green('ok')}: first (1 ms)`,
        `${red('TIMEOUT')}: clients state report follows.`,
        'sock55d1 => (IN PROGRESS) CLIENT UNBLOCK resumes the client',
        'Killing still running Redis server 1234',
      ].join('\n'),
    )
    expect(timeout.results).toEqual([
      { name: 'first', status: 'ok', detail: '' },
      {
        name: 'CLIENT UNBLOCK resumes the client',
        status: 'timeout',
        detail: 'no progress within --timeout',
      },
    ])
    expect(timeout.aborted?.kind).toBe('timeout')
  })
})
