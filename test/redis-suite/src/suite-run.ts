import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startModeTarget } from './mode-target.js'
import { runUnit } from './run-unit.js'
import type { UnitAbort, UnitOutcome } from './runtest-output.js'
import { SUITE_LIMITS, SUITE_SKIPS, type SuiteLimit } from './suite-limits.js'
import { unitKeys } from './unit-keys.js'
import { type Mode, SINGLE_DB_MODES, type Unit } from './units.js'

/** The vendored suite (test/redis-suite/redis-7.0.15), from src or dist alike. */
export const VENDORED_SUITE = fileURLToPath(new URL('../redis-7.0.15', import.meta.url))

// Seconds without a test finishing before runtest gives up (the slowest test directly takes about 10 s), and
// the harness's own limit for a unit, in case runtest itself hangs.
const PROGRESS_TIMEOUT_SECONDS = 120
const UNIT_DEADLINE_MS = 6 * 60_000
// runtest's test server binds a free port among the 32 below --baseport; each concurrent run gets a window.
const BASEPORT_WINDOW = 64

/** What to run. */
export interface SuiteRunOptions {
  readonly units: readonly Unit[]
  readonly modes: readonly Mode[]
  /** Units run at once; each has its own servers. */
  readonly concurrency: number
  /** Postgres for the aggregator of the auto and promoted modes (a schema each). */
  readonly databaseUrl: string
  readonly limits?: readonly SuiteLimit[]
  /** Called with each unit's run as it finishes. */
  readonly onRun?: (run: UnitModeRun) => void
}

/** One unit's run in one mode. */
export interface UnitModeRun extends UnitOutcome {
  readonly unit: Unit
  readonly mode: Mode
  /** Processes that died while the unit ran: the proxy crashing shows here. */
  readonly crashes: readonly string[]
  /** The control plane's promotions and updates while the unit ran, by mitigation (`local_cache`, `split x2`). */
  readonly mitigations: readonly string[]
  readonly elapsedMs: number
  readonly output: string
}

/** Runs every unit in every mode, `concurrency` at a time, each on fresh servers stopped afterwards. */
export async function runSuite(options: SuiteRunOptions): Promise<UnitModeRun[]> {
  const limits = [...SUITE_SKIPS, ...(options.limits ?? SUITE_LIMITS)]
  // runtest writes tests/tmp; the repository's copy stays untouched.
  const suiteDir = mkdtempSync(join(tmpdir(), 'heatsink-redis-suite-'))
  try {
    cpSync(VENDORED_SUITE, suiteDir, { recursive: true })
    const skipfiles = new Map(
      options.modes.map((mode) => {
        const file = join(suiteDir, `skip-${mode}.txt`)
        const names = limits
          .filter((limit) => limit.skip && limit.modes.includes(mode))
          .map((limit) => limit.test)
        writeFileSync(file, names.map((name) => `${name}\n`).join(''))
        return [mode, file] as const
      }),
    )
    const jobs = options.units.flatMap((unit) => options.modes.map((mode) => ({ unit, mode })))
    const runs: UnitModeRun[] = []
    const firstBaseport = 20_000 + BASEPORT_WINDOW * Math.floor(Math.random() * 100)
    const worker = async (slot: number) => {
      for (let job = jobs.shift(); job !== undefined; job = jobs.shift()) {
        const run = await runOne(job.unit, job.mode, {
          suiteDir,
          skipfile: skipfiles.get(job.mode) as string,
          baseport: firstBaseport + slot * BASEPORT_WINDOW,
          databaseUrl: options.databaseUrl,
        })
        runs.push(run)
        options.onRun?.(run)
      }
    }
    await Promise.all(Array.from({ length: options.concurrency }, (_, slot) => worker(slot)))
    return runs
  } finally {
    rmSync(suiteDir, { recursive: true, force: true })
  }
}

interface RunContext {
  readonly suiteDir: string
  readonly skipfile: string
  readonly baseport: number
  readonly databaseUrl: string
}

async function runOne(unit: Unit, mode: Mode, context: RunContext): Promise<UnitModeRun> {
  const started = performance.now()
  let target: Awaited<ReturnType<typeof startModeTarget>>
  try {
    target = await startModeTarget(mode, {
      databaseUrl: context.databaseUrl,
      keys: mode === 'promoted' ? unitKeys(context.suiteDir, unit) : [],
    })
  } catch (error) {
    const detail = `setup failed: ${error instanceof Error ? error.message : String(error)}`
    const aborted: UnitAbort = { kind: 'setup', detail }
    const elapsedMs = performance.now() - started
    return { unit, mode, results: [], aborted, crashes: [], mitigations: [], elapsedMs, output: '' }
  }
  try {
    const run = await runUnit({
      suiteDir: context.suiteDir,
      unit,
      port: target.port,
      baseport: context.baseport,
      skipfile: context.skipfile,
      singledb: SINGLE_DB_MODES.includes(mode),
      progressTimeoutSeconds: PROGRESS_TIMEOUT_SECONDS,
      deadlineMs: UNIT_DEADLINE_MS,
    })
    const crashes = target.crashes()
    const mitigations = await target.mitigations().catch((error: unknown) => [`unknown (${String(error)})`])
    return { ...run, unit, mode, crashes, mitigations, elapsedMs: performance.now() - started }
  } finally {
    await target.stop()
  }
}

/** One line: the unit's mode, counts, time, and how it ended. */
export function describeRun(run: UnitModeRun): string {
  const count = (status: string) => run.results.filter((result) => result.status === status).length
  const ended = run.aborted === null ? '' : ` aborted (${run.aborted.kind})`
  const crashed =
    run.crashes.length === 0 ? '' : ` crashed: ${run.crashes.map((c) => c.split(' ')[0]).join(', ')}`
  return `${run.mode.padEnd(8)} ${run.unit.padEnd(18)} ok ${count('ok')}, not ok ${
    count('err') + count('exception') + count('timeout')
  }, skipped ${count('skipped')} in ${(run.elapsedMs / 1000).toFixed(1)} s${ended}${crashed}`
}
