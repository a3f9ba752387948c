import {
  createNames,
  encodeReport,
  type HeatsinkNames,
  STREAM_FIELD,
  WIRE_VERSION,
  type WindowReport,
} from '@heatsink/protocol'
import type { Redis } from 'ioredis'
import { pino } from 'pino'
import { Counter, Histogram, Registry } from 'prom-client'

/** A protocol-valid report from a stand-in agent. */
export function makeReport(
  agentId: string,
  windowStart: number,
  counts: Record<string, number | [count: number, writes: number, misses: number, forms?: number]>,
  extra: Partial<WindowReport> = {},
): WindowReport {
  // Command forms travel beside the candidates, one per candidate, when any entry gives them.
  const entries = Object.values(counts)
  const forms = entries.some((c) => typeof c !== 'number' && c[3] !== undefined)
    ? { forms: entries.map((c) => (typeof c === 'number' ? 0 : (c[3] ?? 0))) }
    : {}
  return {
    v: WIRE_VERSION,
    kind: 'report',
    agentId,
    seq: 1,
    windowStart,
    windowMs: 1000,
    total: 0,
    dropped: 0,
    partial: false,
    hotKeyStats: [],
    candidates: Object.entries(counts).map(([key, c]) => {
      const [count, writes, misses] = typeof c === 'number' ? [c, 0, 0] : c
      return { key, count, reads: count - writes, writes, misses }
    }),
    ...forms,
    ...extra,
  }
}

/** Appends a report as an agent does. */
export async function sendReport(redis: Redis, names: HeatsinkNames, report: WindowReport): Promise<string> {
  return (await redis.xadd(
    names.reportStreamFor(report.agentId),
    '*',
    STREAM_FIELD,
    encodeReport(report),
  )) as string
}

export const silentLog = pino({ level: 'silent' })

/** Real prom-client metrics in a private registry, read back by tests. */
export function testMetrics() {
  const registry = new Registry()
  return {
    registry,
    claimed: new Counter({ name: 'claimed', help: 'h', registers: [registry] }),
    deadLettered: new Counter({ name: 'dead', help: 'h', labelNames: ['reason'], registers: [registry] }),
    groupRecreated: new Counter({
      name: 'recreated',
      help: 'h',
      labelNames: ['stream'],
      registers: [registry],
    }),
    reports: new Counter({ name: 'reports', help: 'h', registers: [registry] }),
    entries: new Counter({ name: 'entries', help: 'h', registers: [registry] }),
    stale: new Counter({ name: 'stale', help: 'h', registers: [registry] }),
    reportLag: new Histogram({ name: 'lag', help: 'h', registers: [registry] }),
  }
}

export async function counterValue(counter: Counter, labels?: Record<string, string>): Promise<number> {
  const { values } = await counter.get()
  return values
    .filter((v) => !labels || Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0)
}

export { createNames }
