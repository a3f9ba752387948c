import type { HeatsinkNames, WindowReport } from '@heatsink/protocol'
import { encodeReport, STREAM_FIELD } from '@heatsink/protocol'
import type { Redis } from 'ioredis'
import { makeReport } from '../../../services/aggregator/test/support/reports.js'

/** Reports from many stand-in agents, and the per-window sums an exact aggregation must arrive at. */
export interface ReportBurst {
  readonly reports: WindowReport[]
  /** windowStart -> key -> the sum over agents. */
  readonly expected: Map<number, Map<string, number>>
}

/**
 * One final report per agent and window, each naming `keysPerReport` of `keys` with counts from 1 to 50. One
 * report per agent and window means a report lost anywhere shows up as a sum short by its counts.
 */
export function reportBurst(options: {
  agents: number
  agentPrefix: string
  windows: readonly number[]
  keys: readonly string[]
  keysPerReport: number
}): ReportBurst {
  const random = Math.random
  const reports: WindowReport[] = []
  const expected = new Map<number, Map<string, number>>()
  for (const windowStart of options.windows) {
    const sums = new Map<string, number>()
    expected.set(windowStart, sums)
    for (let agent = 0; agent < options.agents; agent++) {
      const counts: Record<string, number> = {}
      for (let i = 0; i < options.keysPerReport; i++) {
        const key = options.keys[Math.floor(random() * options.keys.length)] as string
        if (counts[key] !== undefined) continue
        const count = 1 + Math.floor(random() * 50)
        counts[key] = count
        sums.set(key, (sums.get(key) ?? 0) + count)
      }
      reports.push(makeReport(`${options.agentPrefix}-${agent}`, windowStart, counts))
    }
  }
  return { reports, expected }
}

/** Appends the reports as agents do (XADD to each agent's stream), pipelined in chunks. */
export async function sendReports(redis: Redis, names: HeatsinkNames, reports: readonly WindowReport[]) {
  for (let first = 0; first < reports.length; first += 200) {
    const pipeline = redis.pipeline()
    for (const report of reports.slice(first, first + 200)) {
      pipeline.xadd(names.reportStreamFor(report.agentId), '*', STREAM_FIELD, encodeReport(report))
    }
    await pipeline.exec()
  }
}
