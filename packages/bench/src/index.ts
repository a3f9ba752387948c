export { type Measurement, type MeasureOptions, measure, percentile } from './harness.js'
export { machine, printRow, type ResultRow, saveRows } from './results.js'
