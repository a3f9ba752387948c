/** Keys made hot on purpose: `count` requests in every window, over every agent or the first `agents`. */
export interface PlantedKey {
  key: string
  count: number
  agents?: number
  rotation: number
}

/** What fleet-run.ts sends each worker process. */
export interface WorkerPlan {
  redisUrl: string
  namespace: string
  windowMs: number
  firstAgent: number
  agentCount: number
  fleetSize: number
  windows: number
  /** Start of the first window (epoch ms, on the window grid). */
  start: number
  /** false: agents ignore the control plane's tuning (a fixed floor and top K alone, as before fleet tuning). */
  tuned: boolean
  planted: PlantedKey[]
  backgroundKeys: number
  backgroundPerAgent: number
  zipfS: number
  seed: number
}

/** What a worker sends after each window. */
export interface WorkerWindow {
  window: number
  /** Report bytes its agents sent in the window. */
  bytes: number
  agents: number
  /** The report floor its agents applied. */
  floor: number
  /** Exact requests per key it generated in the window, over all its agents. */
  exact: Array<[string, number]>
}

/** The id simulated agent `index` reports under (and so the report stream it writes to). */
export function fleetAgentId(index: number): string {
  return `fleet-agent-${index}`
}
