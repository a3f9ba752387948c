import { type HeatsinkNames, keyHash, type WindowReport } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Counter, Gauge } from 'prom-client'

/** The sketch's error on one key, from the agents that sampled it recently. */
export interface KeySketchError {
  /** Agents whose latest sample of the key is recent. */
  agents: number
  meanRelativeError: number
  maxRelativeError: number
}

export interface SketchErrorMetrics {
  sampledKeys: Counter
  overBound: Counter
  meanRelativeError: Gauge
  maxRelativeError: Gauge
}

// A key's samples stay readable this long, like its mitigation statistics.
const RETAIN_SECONDS = 120

/**
 * The sketch's error measured at run time, as agents report it (each samples one key in 256 by fingerprint and
 * counts it exactly): exported as metrics for the window being reported, and kept per key for
 * GET /hotkeys/{key}/stats.
 */
export class SketchErrors {
  readonly #redis: Redis | Cluster
  readonly #names: HeatsinkNames
  readonly #metrics: SketchErrorMetrics
  // The newest window reported to this replica, and its running totals.
  #window = -1
  #sampled = 0
  #relativeSum = 0
  #max = 0

  constructor(redis: Redis | Cluster, names: HeatsinkNames, metrics: SketchErrorMetrics) {
    this.#redis = redis
    this.#names = names
    this.#metrics = metrics
  }

  /** Takes a final report's error sample; reports without one (sampling off, partial reports) change nothing. */
  async record(report: WindowReport): Promise<void> {
    const error = report.sketchError
    if (report.partial || error === undefined || error.sampled === 0) return
    this.#metrics.sampledKeys.inc(error.sampled)
    this.#metrics.overBound.inc(error.overBound)
    if (report.windowStart > this.#window) {
      this.#window = report.windowStart
      this.#sampled = 0
      this.#relativeSum = 0
      this.#max = 0
    }
    if (report.windowStart === this.#window) {
      this.#sampled += error.sampled
      this.#relativeSum += error.meanRelativeError * error.sampled
      this.#max = Math.max(this.#max, error.maxRelativeError)
      this.#metrics.meanRelativeError.set(this.#relativeSum / this.#sampled)
      this.#metrics.maxRelativeError.set(this.#max)
    }
    await Promise.all(
      error.keys.map(async ([key, estimate, exact]) => {
        const hash = this.#names.sketchSampleKey(keyHash(key))
        await this.#redis.hset(hash, report.agentId, JSON.stringify([estimate, exact, report.windowStart]))
        await this.#redis.expire(hash, RETAIN_SECONDS)
      }),
    )
  }

  /** The key's error over the agents' samples from windows starting at `since` or later; null if none. */
  async read(key: string, since: number): Promise<KeySketchError | null> {
    const stored = await this.#redis.hgetall(this.#names.sketchSampleKey(keyHash(key)))
    let agents = 0
    let sum = 0
    let max = 0
    for (const value of Object.values(stored)) {
      const parsed = parseSample(value)
      if (parsed === undefined || parsed.windowStart < since) continue
      const relative = (parsed.estimate - parsed.exact) / parsed.exact
      agents++
      sum += relative
      max = Math.max(max, relative)
    }
    return agents === 0 ? null : { agents, meanRelativeError: sum / agents, maxRelativeError: max }
  }
}

function parseSample(value: string): { estimate: number; exact: number; windowStart: number } | undefined {
  try {
    const [estimate, exact, windowStart] = JSON.parse(value) as unknown[]
    if (
      typeof estimate === 'number' &&
      typeof exact === 'number' &&
      exact > 0 &&
      typeof windowStart === 'number'
    ) {
      return { estimate, exact, windowStart }
    }
  } catch {
    // Not ours: ignored.
  }
  return undefined
}
