import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { readGroupBacklog } from '@heatsink/aggregator'
import { createNames, type RegistrySnapshot } from '@heatsink/protocol'
import type { Redis } from 'ioredis'
import { fleetAgentId, type PlantedKey, type WorkerPlan, type WorkerWindow } from './fleet-plan.js'

export type { PlantedKey } from './fleet-plan.js'

export interface FleetScenario {
  redisUrl: string
  namespace: string
  /** A plain client on the same Redis, to read the registry. */
  redis: Redis
  fleetSize: number
  processes: number
  windowMs: number
  windows: number
  /** Requests per window at which a key is hot (the aggregator's HEATSINK_HOT_RPS over one window). */
  hotPerWindow: number
  planted: PlantedKey[]
  backgroundKeys: number
  backgroundPerAgent: number
  zipfS: number
  seed: number
  /** false: agents ignore the control plane's tuning (the fixed floor and top K alone). */
  tuned: boolean
}

export interface FleetOutcome {
  /** Keys whose true cluster-wide count reached the threshold in some window, and which of them were promoted. */
  hot: string[]
  missed: string[]
  /** Promoted keys whose true count stayed below half the threshold in every window. */
  coldPromoted: string[]
  recall: number
  /** Report bytes per agent per window, median over windows after the first three. */
  bytesPerAgentPerWindow: number
  /** The report floor agents applied in the last window. */
  floor: number
}

// The compiled worker, from src/fleet (tests) as from dist/fleet (benchmarks): both sit two levels below the root.
const WORKER = fileURLToPath(new URL('../../dist/fleet/fleet-worker.js', import.meta.url))

/** Runs simulated agents in `processes` child processes for `windows` windows against a running aggregator. */
export async function runFleet(scenario: FleetScenario): Promise<FleetOutcome> {
  const { windowMs, windows, fleetSize, processes } = scenario
  // Two windows of lead, so every process has its plan and subscription before the first window opens.
  const start = (Math.floor(Date.now() / windowMs) + 2) * windowMs
  const perProcess = Math.ceil(fleetSize / processes)
  const truth = new Map<number, Map<string, number>>()
  const bytes = new Map<number, { bytes: number; agents: number }>()
  let floor = 0
  const runs = Array.from({ length: processes }, (_, p) => {
    const firstAgent = p * perProcess
    const agentCount = Math.min(perProcess, fleetSize - firstAgent)
    const child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const plan: WorkerPlan = {
      redisUrl: scenario.redisUrl,
      namespace: scenario.namespace,
      windowMs,
      firstAgent,
      agentCount,
      fleetSize,
      windows,
      start,
      tuned: scenario.tuned,
      planted: scenario.planted,
      backgroundKeys: scenario.backgroundKeys,
      backgroundPerAgent: scenario.backgroundPerAgent,
      zipfS: scenario.zipfS,
      seed: scenario.seed,
    }
    child.send(plan)
    return new Promise<void>((resolve, reject) => {
      child.on('message', (message: WorkerWindow) => {
        const counts = truth.get(message.window) ?? new Map<string, number>()
        for (const [key, count] of message.exact) counts.set(key, (counts.get(key) ?? 0) + count)
        truth.set(message.window, counts)
        const sent = bytes.get(message.window) ?? { bytes: 0, agents: 0 }
        bytes.set(message.window, { bytes: sent.bytes + message.bytes, agents: sent.agents + message.agents })
        floor = message.floor
      })
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`fleet worker exited ${code}`)),
      )
    })
  })
  await Promise.all(runs)
  // The outcome is what detection made of every report, so it is judged once the aggregator has applied them all:
  // on a loaded machine its ingest runs seconds behind the agents, and a key exactly at the threshold crosses
  // only when the last agent's report for a window is in. Then a second for the crossings' promotions to publish.
  await reportsApplied(scenario, Date.now() + INGEST_DEADLINE_MS)
  await new Promise((resolve) => setTimeout(resolve, Math.max(1000, 2 * windowMs)))
  return judge(scenario, truth, bytes, floor, await promotedKeys(scenario))
}

const INGEST_DEADLINE_MS = 30_000

// Waits until the aggregators' consumer group has read and acknowledged every report of the fleet's streams (or
// the deadline passes: the judgment then shows what was missed).
async function reportsApplied(
  { redis, namespace, fleetSize }: FleetScenario,
  deadline: number,
): Promise<void> {
  const names = createNames(namespace)
  const streams = Array.from({ length: fleetSize }, (_, i) => names.reportStreamFor(fleetAgentId(i)))
  const applied = async (stream: string) => {
    const group = await readGroupBacklog(redis, stream, names.consumerGroup).catch(() => undefined)
    return group?.backlog === 0 && group.pending === 0
  }
  while (Date.now() < deadline) {
    if ((await Promise.all(streams.map(applied))).every(Boolean)) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function promotedKeys({ redis, namespace }: FleetScenario): Promise<Set<string>> {
  const text = await redis.hget(createNames(namespace).registrySnapshotKey, 'snapshot')
  const snapshot = text === null ? undefined : (JSON.parse(text) as RegistrySnapshot)
  return new Set(snapshot?.entries.map((entry) => entry.key) ?? [])
}

function judge(
  scenario: FleetScenario,
  truth: Map<number, Map<string, number>>,
  bytes: Map<number, { bytes: number; agents: number }>,
  floor: number,
  promoted: Set<string>,
): FleetOutcome {
  const peak = new Map<string, number>()
  for (const counts of truth.values()) {
    for (const [key, count] of counts) if (count > (peak.get(key) ?? 0)) peak.set(key, count)
  }
  const hot = [...peak].filter(([, count]) => count >= scenario.hotPerWindow).map(([key]) => key)
  const missed = hot.filter((key) => !promoted.has(key))
  const coldPromoted = [...promoted].filter((key) => (peak.get(key) ?? 0) < scenario.hotPerWindow / 2)
  const perAgent = [...bytes]
    .filter(([window]) => window >= 3)
    .map(([, sent]) => sent.bytes / sent.agents)
    .sort((a, b) => a - b)
  return {
    hot,
    missed,
    coldPromoted,
    recall: hot.length === 0 ? 1 : (hot.length - missed.length) / hot.length,
    bytesPerAgentPerWindow: perAgent[Math.floor(perAgent.length / 2)] ?? 0,
    floor,
  }
}

/** 20 keys at each of 1.0x, 1.5x and 3x the threshold, named after their level (`hot:1.5x:7`). */
export function plantedKeys(hotPerWindow: number, agents?: number): PlantedKey[] {
  const levels = [1, 1.5, 3]
  return levels.flatMap((level) =>
    Array.from({ length: 20 }, (_, i) => ({
      key: `hot:${level}x:${i}`,
      count: Math.round(level * hotPerWindow),
      ...(agents === undefined ? {} : { agents }),
      rotation: 7 * i + 3,
    })),
  )
}
