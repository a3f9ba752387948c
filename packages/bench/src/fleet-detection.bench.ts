import { cpuUsage } from 'node:process'
import { startBenchAggregator } from './bench-aggregator.js'
import { type FleetOutcome, plantedKeys, runFleet } from './fleet/fleet-run.js'
import type { ResultRow } from './results.js'

const WINDOW_MS = 1000
const HOT_RPS = 1000
const HOT_PER_WINDOW = (HOT_RPS * WINDOW_MS) / 1000
const WINDOWS = Number(process.env.FLEET_WINDOWS ?? 20)
// The same cluster-wide background whatever the fleet: 40,000 requests a second, Zipf 1.1 over 100,000 keys.
const BACKGROUND_PER_WINDOW = 40_000

interface FleetRun extends FleetOutcome {
  /** CPU the aggregator's process spent per second of the run (one core = 1). */
  aggregatorCpu: number
}

/**
 * Detection over a fleet: 60 keys at 1x, 1.5x and 3x the hot threshold (1,000 req/s), each spread evenly over 50
 * or 200 simulated agents (the agent's own recorder and tuning, in 4 child processes), under a Zipf background;
 * recall over the keys truly hot, cold keys promoted, report bytes per agent per second and the aggregator's CPU.
 * Beside it, the same fleet with the control plane's tuning ignored: a fixed report floor and top 32, as before.
 */
export async function benchFleetDetection(): Promise<ResultRow[]> {
  const rows: ResultRow[] = []
  for (const fleetSize of [50, 200]) {
    const tuned = await fleetRun(fleetSize, true)
    const fixed = await fleetRun(fleetSize, false)
    const line =
      `fleet-detection (${fleetSize} agents, ${WINDOWS} windows of 1 s): recall ${tuned.recall.toFixed(3)} ` +
      `(${tuned.hot.length} hot keys, ${tuned.missed.length} missed, ${tuned.coldPromoted.length} cold promoted), ` +
      `floor ${tuned.floor}, ${bytesPerSecond(tuned)} per agent, aggregator CPU ${(tuned.aggregatorCpu * 100).toFixed(0)}% ` +
      `| fixed floor: recall ${fixed.recall.toFixed(3)} (${fixed.missed.length} missed), ${bytesPerSecond(fixed)} per agent, ` +
      `aggregator CPU ${(fixed.aggregatorCpu * 100).toFixed(0)}%`
    console.log(line)
    rows.push({
      benchmark: `fleet detection, 60 keys at 1-3x the threshold spread over ${fleetSize} agents`,
      heatsink: `recall ${tuned.recall.toFixed(3)}, ${bytesPerSecond(tuned)}/agent, aggregator CPU ${(tuned.aggregatorCpu * 100).toFixed(0)}%`,
      baseline: 'fixed report floor 100 and top 32 (no fleet tuning)',
      baselineFigure: `recall ${fixed.recall.toFixed(3)}, ${bytesPerSecond(fixed)}/agent`,
      ratio: tuned.recall / Math.max(fixed.recall, 0.001),
      note: `recall ratio (aim: recall >= 0.99, no cold key promoted: ${tuned.coldPromoted.length}; report under 8 KiB/s per agent)`,
    })
  }
  return rows
}

async function fleetRun(fleetSize: number, tuned: boolean): Promise<FleetRun> {
  const deployment = await startBenchAggregator('fleet', {
    HEATSINK_HOT_RPS: String(HOT_RPS),
    HEATSINK_WINDOW_MS: String(WINDOW_MS),
    HEATSINK_COOL_SECONDS: '600',
  })
  try {
    const cpuBefore = cpuUsage()
    const started = performance.now()
    const outcome = await runFleet({
      redisUrl: deployment.redisUrl,
      namespace: deployment.namespace,
      redis: deployment.redis,
      fleetSize,
      processes: 4,
      windowMs: WINDOW_MS,
      windows: WINDOWS,
      hotPerWindow: HOT_PER_WINDOW,
      planted: plantedKeys(HOT_PER_WINDOW),
      backgroundKeys: 100_000,
      backgroundPerAgent: BACKGROUND_PER_WINDOW / fleetSize,
      zipfS: 1.1,
      seed: fleetSize,
      tuned,
    })
    const cpu = cpuUsage(cpuBefore)
    const aggregatorCpu = (cpu.user + cpu.system) / 1000 / (performance.now() - started)
    return { ...outcome, aggregatorCpu }
  } finally {
    await deployment.close()
  }
}

function bytesPerSecond(outcome: FleetOutcome): string {
  return `${((outcome.bytesPerAgentPerWindow * 1000) / WINDOW_MS / 1024).toFixed(1)} KiB/s`
}
