export type { PlantedKey } from './fleet/fleet-plan.js'
export { type FleetOutcome, type FleetScenario, plantedKeys, runFleet } from './fleet/fleet-run.js'
export { type Measurement, type MeasureOptions, measure, percentile } from './harness.js'
export { machine, printRow, type ResultRow, saveRows } from './results.js'
