import { type HeatsinkNames, type HotKeyStats, keyHash, type WindowReport } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'

/** One agent's statistics for one key in one window, as stored. */
export interface StoredKeyStats extends HotKeyStats {
  agentId: string
  windowStart: number
  windowMs: number
}

/** How long an agent's last statistics stay readable: long enough to outlive a few missed windows. */
const RETAIN_SECONDS = 120

/**
 * Keeps each agent's latest per-key mitigation statistics (from final reports) in Redis, one hash per key, so
 * GET /hotkeys/{key}/stats can answer from any replica.
 */
export class KeyStatsStore {
  readonly #redis: Redis | Cluster
  readonly #names: HeatsinkNames

  constructor(redis: Redis | Cluster, names: HeatsinkNames) {
    this.#redis = redis
    this.#names = names
  }

  /** Stores the report's per-key statistics; partial reports carry none worth keeping. */
  async record(report: WindowReport): Promise<void> {
    if (report.partial || report.hotKeyStats.length === 0) return
    await Promise.all(
      report.hotKeyStats.map(async (stats) => {
        const hash = this.#names.keyStatsKey(keyHash(stats.key))
        const stored: StoredKeyStats = {
          ...stats,
          agentId: report.agentId,
          windowStart: report.windowStart,
          windowMs: report.windowMs,
        }
        await this.#redis.hset(hash, report.agentId, JSON.stringify(stored))
        await this.#redis.expire(hash, RETAIN_SECONDS)
      }),
    )
  }

  /** Every agent's latest statistics for the key (possibly from different windows). */
  async read(key: string): Promise<StoredKeyStats[]> {
    const all = await this.#redis.hgetall(this.#names.keyStatsKey(keyHash(key)))
    const out: StoredKeyStats[] = []
    for (const value of Object.values(all)) {
      try {
        out.push(JSON.parse(value) as StoredKeyStats)
      } catch {
        // Written by this module only; an unreadable value is skipped rather than failing the request.
      }
    }
    return out
  }
}
