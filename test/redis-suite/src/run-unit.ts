import { spawn } from 'node:child_process'
import { onProcessExit } from '@heatsink/devservices'
import { parseRuntestOutput, type UnitOutcome } from './runtest-output.js'

/** How to run one unit against a server that is already listening. */
export interface RunUnitOptions {
  /** A private copy of the vendored suite (runtest writes tests/tmp). */
  readonly suiteDir: string
  readonly unit: string
  readonly port: number
  /** runtest's test server binds a free port among the 32 below this; concurrent runs need distinct values. */
  readonly baseport: number
  /** A file of test names to skip, one a line (runtest's --skipfile). */
  readonly skipfile: string
  /** Work in database 0 only (runtest's --singledb) instead of 9 and others. */
  readonly singledb: boolean
  /** runtest's --timeout: seconds without any test finishing before it gives up. */
  readonly progressTimeoutSeconds: number
  /** The harness's own limit for the whole unit, in case runtest itself hangs. */
  readonly deadlineMs: number
}

/** What one unit's run reported, its whole output, and how long it took. */
export interface UnitRun extends UnitOutcome {
  readonly output: string
  readonly elapsedMs: number
}

/**
 * Runs one unit of the suite in external mode and parses what it reports. runtest and the test client it
 * spawns run in a process group of their own, killed whole when the unit ends, overruns its deadline, or this
 * process exits.
 */
export async function runUnit(options: RunUnitOptions): Promise<UnitRun> {
  const started = performance.now()
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port),
    // Replication needs servers the suite starts itself, which external mode cannot.
    '--tags',
    '-needs:repl',
    '--clients',
    '1',
    '--timeout',
    String(options.progressTimeoutSeconds),
    '--baseport',
    String(options.baseport),
    '--portcount',
    '32',
    // An exception inside one test fails that test instead of ending the unit.
    '--durable',
    '--skipfile',
    options.skipfile,
    ...(options.singledb ? ['--singledb'] : []),
    '--single',
    options.unit,
  ]
  const child = spawn('./runtest', args, {
    cwd: options.suiteDir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TERM: 'dumb' },
  })
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // The group has already exited.
    }
  }
  const forget = onProcessExit(killGroup)
  const chunks: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk))
  let hung = false
  const deadline = setTimeout(() => {
    hung = true
    killGroup()
  }, options.deadlineMs)
  await new Promise<void>((resolve) => {
    child.once('error', () => resolve())
    child.once('close', () => resolve())
  })
  clearTimeout(deadline)
  killGroup()
  forget()
  const output = Buffer.concat(chunks).toString('utf8')
  const outcome = parseRuntestOutput(output)
  const aborted = hung
    ? { kind: 'hung' as const, detail: `runtest did not finish within ${options.deadlineMs} ms` }
    : outcome.aborted
  return { ...outcome, aborted, output, elapsedMs: performance.now() - started }
}
