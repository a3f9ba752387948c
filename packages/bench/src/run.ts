import { benchReportDecode } from './report-decode.bench.js'
import { printRow, type ResultRow, saveRows } from './results.js'
import { benchSketchRecord } from './sketch-record.bench.js'

/** Every benchmark by name; `node dist/run.js <name>` runs one, no argument runs all. */
const benchmarks: Record<string, () => ResultRow[] | Promise<ResultRow[]>> = {
  'sketch-record': benchSketchRecord,
  'report-decode': benchReportDecode,
}

const only = process.argv[2]
if (only !== undefined && !(only in benchmarks)) {
  console.error(`unknown benchmark ${only}; known: ${Object.keys(benchmarks).join(', ')}`)
  process.exit(2)
}
const rows: ResultRow[] = []
for (const [name, run] of Object.entries(benchmarks)) {
  if (only !== undefined && name !== only) continue
  for (const row of await run()) {
    printRow(row)
    rows.push(row)
  }
}
console.log(`results written to ${saveRows(rows)}`)
