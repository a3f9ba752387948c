import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, hostname, totalmem } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** One row of the results table: a figure beside the alternative it is compared with, measured in the same run. */
export interface ResultRow {
  benchmark: string
  heatsink: string
  baseline: string
  baselineFigure: string
  /** Heatsink's figure divided by the baseline's; what "better" means is stated in `note`. */
  ratio: number
  note: string
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const resultsDir = join(repoRoot, 'bench-results')
const performanceDoc = join(repoRoot, 'docs', 'performance.md')
// docs/performance.md's generated part lies between these lines; the dated notes after it are written by hand.
const LATEST_BEGIN = '<!-- latest run: written by pnpm bench (packages/bench/src/results.ts); do not edit -->'
const LATEST_END = '<!-- end of the latest run -->'

/** The machine a run happened on, so a figure is never read without its context. */
export function machine() {
  const cpu = cpus()
  return {
    host: hostname(),
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    date: new Date().toISOString(),
  }
}

/** Prints a row as one line a human reads at a glance. */
export function printRow(row: ResultRow): void {
  console.log(
    `${row.benchmark}: ${row.heatsink}  |  ${row.baseline}: ${row.baselineFigure}  |  ratio ${row.ratio.toFixed(2)}x (${row.note})`,
  )
}

/**
 * Writes bench-results/latest.json and rewrites bench-results/latest.md and docs/performance.md's latest run from
 * it. A run of every benchmark replaces the file, so a benchmark renamed or removed leaves no stale row; a run of
 * one merges its rows in (keyed by benchmark), keeping the others' figures.
 */
export function saveRows(rows: readonly ResultRow[], { merge }: { merge: boolean }): string {
  mkdirSync(resultsDir, { recursive: true })
  const jsonPath = join(resultsDir, 'latest.json')
  let previous: ResultRow[] = []
  if (merge) {
    try {
      previous = (JSON.parse(readFileSync(jsonPath, 'utf8')) as { rows: ResultRow[] }).rows
    } catch {
      // First run: nothing to merge with.
    }
  }
  const byName = new Map(previous.map((r) => [r.benchmark, r]))
  for (const row of rows) byName.set(row.benchmark, row)
  const all = [...byName.values()]
  const info = machine()
  writeFileSync(jsonPath, `${JSON.stringify({ machine: info, rows: all }, null, 2)}\n`)
  const md = [
    `Measured on ${info.cpu} (${info.cores} cores, ${info.memoryGiB} GiB), Node ${info.node}, ${info.date}.`,
    '',
    '| benchmark | Heatsink | compared with | its figure | ratio | reading |',
    '| --- | --- | --- | --- | --- | --- |',
    ...all.map(
      (r) =>
        `| ${r.benchmark} | ${r.heatsink} | ${r.baseline} | ${r.baselineFigure} | ${r.ratio.toFixed(2)}x | ${r.note} |`,
    ),
    '',
  ].join('\n')
  writeFileSync(join(resultsDir, 'latest.md'), md)
  writeFileSync(performanceDoc, withLatestRun(readFileSync(performanceDoc, 'utf8'), md))
  return resultsDir
}

/** `doc` with the text between LATEST_BEGIN and LATEST_END replaced by `table`; an error when either is missing. */
export function withLatestRun(doc: string, table: string): string {
  const begin = doc.indexOf(LATEST_BEGIN)
  const end = doc.indexOf(LATEST_END)
  if (begin < 0 || end < begin)
    throw new Error(`docs/performance.md lacks the lines "${LATEST_BEGIN}" and "${LATEST_END}"`)
  return `${doc.slice(0, begin + LATEST_BEGIN.length)}\n\n${table.trimEnd()}\n\n${doc.slice(end)}`
}
