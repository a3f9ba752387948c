import { randomBytes } from 'node:crypto'
import { createAggregatorSchema } from './aggregator-schema.js'
import { promoteKeys } from './promote-keys.js'
import { type SuiteProcess, startAggregator, startProxy, startSuiteRedis } from './suite-processes.js'
import type { Mode } from './units.js'

/** The aggregator's settings per mode with a control plane. */
const CONTROL_PLANE: Readonly<Partial<Record<Mode, Record<string, string>>>> = {
  // 50 requests per second (default 1,000) promotes the keys of the suite's own loops and fuzzers.
  auto: { HEATSINK_HOT_RPS: '50' },
  // Only the keys promoted before the unit; they stay promoted however cool they get during it.
  promoted: { HEATSINK_HOT_RPS: '1000000000', HEATSINK_COOL_SECONDS: '3600' },
}

/** What one unit runs against in one mode: the port the suite talks to, and everything behind it. */
export interface ModeTarget {
  readonly port: number
  /** `<process> exited: <its last output>` for each process that died while the unit ran. */
  crashes(): string[]
  /** The mitigations the control plane applied (`<mitigation>` per promote or update event); [] without one. */
  mitigations(): Promise<string[]>
  /** Stops every process and drops the schema, even after a failure. */
  stop(): Promise<void>
}

/** What starting a target needs besides the mode. */
export interface TargetContext {
  readonly databaseUrl: string
  /** The keys the promoted mode registers local_cache before the unit runs. */
  readonly keys: readonly string[]
}

/**
 * Starts a fresh private redis-server and, for the proxy modes, the proxy (and aggregator) in front of it, with a
 * control Redis of their own.
 */
export async function startModeTarget(mode: Mode, context: TargetContext): Promise<ModeTarget> {
  const processes: SuiteProcess[] = []
  const cleanups: Array<() => Promise<void>> = []
  const stop = async () => {
    for (const process of processes.reverse()) await process.stop().catch(() => {})
    for (const cleanup of cleanups) await cleanup().catch(() => {})
  }
  try {
    const redis = await startSuiteRedis()
    processes.push(redis)
    let aggregator: SuiteProcess | undefined
    const target = (port: number): ModeTarget => ({
      port,
      crashes: () =>
        processes.flatMap((p) => (p.crashed() === null ? [] : [`${p.name} exited: ${p.crashed()}`])),
      mitigations: () =>
        aggregator === undefined ? Promise.resolve([]) : appliedMitigations(aggregator.port),
      stop,
    })
    if (mode === 'direct') return target(redis.port)

    // Heatsink's own state on a Redis of its own (HEATSINK_CONTROL_REDIS_URL), as docs/operations.md advises where
    // clients must see their Redis alone: the suite's Redis keeps only what tracking and the data need.
    const control = await startSuiteRedis()
    processes.push(control)
    const namespace = `redis-suite-${randomBytes(4).toString('hex')}`
    const settings = CONTROL_PLANE[mode]
    if (settings !== undefined) {
      const schema = await createAggregatorSchema(context.databaseUrl)
      cleanups.push(schema.drop)
      aggregator = await startAggregator(control.port, schema.url, namespace, settings)
      processes.push(aggregator)
    }
    const proxy = await startProxy(redis.port, control.port, namespace)
    processes.push(proxy)
    if (mode === 'promoted' && aggregator !== undefined) {
      await promoteKeys(
        { aggregatorPort: aggregator.port, proxyPort: proxy.port, proxyMetricsPort: proxy.metricsPort },
        context.keys,
      )
    }
    return target(proxy.port)
  } catch (error) {
    await stop()
    throw error
  }
}

// GET /events keeps the last 500 registry changes, newest first.
async function appliedMitigations(aggregatorPort: number): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:${aggregatorPort}/events?limit=500`)
  const { events } = (await response.json()) as {
    events: Array<{ type: string; mitigation: string; splitFactor: number }>
  }
  return events
    .filter((event) => event.type !== 'demote')
    .map((event) => (event.mitigation === 'split' ? `split x${event.splitFactor}` : event.mitigation))
}
