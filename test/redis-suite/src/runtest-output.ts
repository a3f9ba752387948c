/** What runtest reported for one test. `skipped` covers runtest's `skip` (skipfile) and `ignore` (tags). */
export type TestStatus = 'ok' | 'err' | 'exception' | 'timeout' | 'skipped'

/** One test as runtest reported it. */
export interface TestResult {
  /** The test's name; a name the unit runs more than once gets ` (run 2)`, ` (run 3)`... on its later runs. */
  readonly name: string
  readonly status: TestStatus
  /** For err and exception: runtest's message; for skipped: why. */
  readonly detail: string
}

/**
 * How a unit's run ended early: runtest's own exception or TIMEOUT, the harness's deadline (hung), or the
 * servers in front of it not starting (setup).
 */
export interface UnitAbort {
  readonly kind: 'exception' | 'timeout' | 'hung' | 'setup'
  readonly detail: string
}

/** Everything one runtest invocation reported. */
export interface UnitOutcome {
  readonly results: readonly TestResult[]
  /** null when the unit ran to its end. */
  readonly aborted: UnitAbort | null
}

// runtest colours its status words; the parser reads the words.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are control characters by definition
const ANSI = /\u001b\[[0-9;]*m/g
const STATUS_LINE = /^\[(ok|err|skip|ignore|exception|TIMEOUT)\]: (.*)$/
// A message runs until the next status or progress line (`[1/1 done]: ...`) or runtest's closing banner.
const END_OF_DETAIL = /^\[|^\s+The End$/
const OK_ELAPSED = / \(\d+ ms\)$/
// `[err]: <name> in tests/unit/x.tcl`, then the message; --durable turns exceptions inside a test into errs
// whose message carries Tcl's stack trace.
const ERR_LOCATION = / in tests\/[^\s]+\.tcl$/
const TCL_TRACE = /\n\s+while executing\n|\n\s+invoked from within\n/
// A TIMEOUT report names the test each client was in: `sock1 => (IN PROGRESS) <name>`.
const IN_PROGRESS = /=> \(IN PROGRESS\) (.*)$/
// An ignore's reason is runtest's own text after the name; tag reasons contain ': ' themselves.
const IGNORE_REASON = /^(.*?): ((?:Tag: |Not supported|Needs ).*)$/

/** Parses runtest's output into one result per test, in order, and how the run ended. */
export function parseRuntestOutput(output: string): UnitOutcome {
  const lines = output.replace(ANSI, '').split('\n')
  const results: TestResult[] = []
  const seen = new Map<string, number>()
  let aborted: UnitAbort | null = null
  const add = (name: string, status: TestStatus, detail = '') => {
    const count = (seen.get(name) ?? 0) + 1
    seen.set(name, count)
    results.push({ name: count === 1 ? name : `${name} (run ${count})`, status, detail })
  }

  for (let i = 0; i < lines.length; i++) {
    const match = STATUS_LINE.exec(lines[i] as string)
    if (match === null) continue
    const [, status, rest = ''] = match
    const following = () => {
      const detail: string[] = []
      while (i + 1 < lines.length && !END_OF_DETAIL.test(lines[i + 1] as string)) {
        detail.push(lines[i + 1] as string)
        i++
      }
      return detail.join('\n').trim()
    }
    switch (status) {
      case 'ok':
        add(rest.replace(OK_ELAPSED, ''), 'ok')
        break
      case 'err': {
        const message = following()
        // With --durable, an error outside any test (in a unit's setup code) is an err without a test name;
        // the unit ends there.
        if (!ERR_LOCATION.test(rest)) {
          aborted = { kind: 'exception', detail: `${rest}\n${message}`.trim() }
          break
        }
        add(rest.replace(ERR_LOCATION, ''), TCL_TRACE.test(`\n${message}\n`) ? 'exception' : 'err', message)
        break
      }
      case 'skip':
        add(rest, 'skipped', 'skipfile')
        break
      case 'ignore': {
        const reason = IGNORE_REASON.exec(rest)
        add(reason?.[1] ?? rest, 'skipped', reason?.[2] ?? 'ignored by runtest')
        break
      }
      case 'exception':
        aborted = { kind: 'exception', detail: `${rest}\n${following()}`.trim() }
        break
      case 'TIMEOUT': {
        const report = following()
        for (const line of report.split('\n')) {
          const inProgress = IN_PROGRESS.exec(line)
          if (inProgress?.[1] !== undefined) add(inProgress[1], 'timeout', 'no progress within --timeout')
        }
        aborted = { kind: 'timeout', detail: report }
        break
      }
    }
  }
  return { results, aborted }
}
