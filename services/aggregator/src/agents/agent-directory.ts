import type { AgentStatus, HeatsinkNames, WindowReport } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'

/** An agent silent for this many windows is shown as stale. */
const STALE_WINDOWS = 3
/** An agent silent this long is forgotten: it went away, and listing it for ever would bury the live ones. */
const FORGET_AFTER_MS = 10 * 60_000
// Field prefixes beside the agents' own fields (agent ids have no spaces): each agent's summed dropped reports,
// and the sketch error of its latest final report that measured one (partial reports carry none).
const DROPPED = ' dropped\n'
const SKETCH = ' sketch\n'

interface LastReport {
  at: number
  registryVersion: number | null
}

/**
 * The agents the control plane hears from, kept in Redis (`names.agentsKey`, agent id -> last report) so every
 * replica lists the same agents, whichever replica read their reports.
 */
export class AgentDirectory {
  readonly #redis: Redis | Cluster
  readonly #key: string
  readonly #windowMs: number
  readonly #now: () => number
  readonly #log: Logger
  #failing = false

  constructor(
    redis: Redis | Cluster,
    names: HeatsinkNames,
    windowMs: number,
    now: () => number,
    log: Logger,
  ) {
    this.#redis = redis
    this.#key = names.agentsKey
    this.#windowMs = windowMs
    this.#now = now
    this.#log = log
  }

  /**
   * Notes that these reports arrived: one HSET per batch, and a HINCRBY per agent that dropped reports. Never
   * rejects: the listing is for people, and a failure here (the key holding another type, say) must not hold up
   * counting and detection. Failures are logged when a run of them starts and when it ends.
   */
  async record(reports: readonly WindowReport[]): Promise<void> {
    try {
      await this.#record(reports)
      if (this.#failing) this.#log.info('recording agents works again')
      this.#failing = false
    } catch (error) {
      if (!this.#failing)
        this.#log.warn({ err: error }, 'recording agents failed; GET /agents may be out of date')
      this.#failing = true
    }
  }

  async #record(reports: readonly WindowReport[]): Promise<void> {
    if (reports.length === 0) return
    const at = this.#now()
    const latest = new Map<string, string>()
    const dropped = new Map<string, number>()
    for (const report of reports) {
      const last: LastReport = { at, registryVersion: report.registryVersion ?? null }
      latest.set(report.agentId, JSON.stringify(last))
      if (report.dropped > 0) dropped.set(report.agentId, (dropped.get(report.agentId) ?? 0) + report.dropped)
      const error = report.sketchError
      if (error !== undefined) {
        const { sampled, meanRelativeError, maxRelativeError, overBound } = error
        latest.set(
          SKETCH + report.agentId,
          JSON.stringify({ sampled, meanRelativeError, maxRelativeError, overBound }),
        )
      }
    }
    // A report claimed from a dead replica is counted again; dropped reports are a health signal, not a ledger.
    const pipeline = this.#redis.pipeline().hset(this.#key, Object.fromEntries(latest))
    for (const [agentId, count] of dropped) pipeline.hincrby(this.#key, DROPPED + agentId, count)
    await pipeline.exec()
  }

  /** Every agent heard from in the last ten minutes, most recently heard first; older ones are removed. */
  async list(): Promise<AgentStatus[]> {
    const now = this.#now()
    const fields = await this.#redis.hgetall(this.#key)
    const agents: AgentStatus[] = []
    const forgotten: string[] = []
    for (const [field, value] of Object.entries(fields)) {
      if (field.startsWith(DROPPED) || field.startsWith(SKETCH)) continue
      const last = parse(value)
      if (last === undefined || now - last.at > FORGET_AFTER_MS) {
        forgotten.push(field, DROPPED + field, SKETCH + field)
        continue
      }
      const age = Math.max(0, now - last.at)
      agents.push({
        agentId: field,
        lastReportAt: last.at,
        lastReportAgeMs: age,
        reportsDropped: Number(fields[DROPPED + field] ?? 0),
        registryVersion: last.registryVersion,
        sketchError: parseJson<AgentStatus['sketchError']>(fields[SKETCH + field]) ?? null,
        stale: age > STALE_WINDOWS * this.#windowMs,
      })
    }
    if (forgotten.length > 0) await this.#redis.hdel(this.#key, ...forgotten)
    return agents.sort((a, b) => a.lastReportAgeMs - b.lastReportAgeMs || a.agentId.localeCompare(b.agentId))
  }
}

function parse(value: string): LastReport | undefined {
  const last = parseJson<Partial<LastReport>>(value)
  return typeof last?.at === 'number'
    ? { at: last.at, registryVersion: last.registryVersion ?? null }
    : undefined
}

// Values are written by this module only; an unreadable one is dropped rather than failing the listing.
function parseJson<T>(value: string | undefined): T | undefined {
  if (value === undefined) return undefined
  try {
    return JSON.parse(value) as T
  } catch {
    return undefined
  }
}
