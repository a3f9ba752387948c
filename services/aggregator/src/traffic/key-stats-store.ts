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
// Well within RETAIN_SECONDS, so a hash written every window never expires between renewals.
const RENEW_MS = 10_000
// Bounds the key names and renewal times kept; past this many keys they are forgotten and worked out again.
const MAX_RENEWALS_KEPT = 10_000

/**
 * Keeps each agent's latest per-key mitigation statistics (from final reports) in Redis, one hash per key, so
 * GET /hotkeys/{key}/stats can answer from any replica.
 */
export class KeyStatsStore {
  readonly #redis: Redis | Cluster
  readonly #names: HeatsinkNames
  readonly #renewed = new Map<string, number>()
  readonly #hashes = new Map<string, string>()

  constructor(redis: Redis | Cluster, names: HeatsinkNames) {
    this.#redis = redis
    this.#names = names
  }

  /** Stores the report's per-key statistics; partial reports carry none worth keeping. */
  async record(report: WindowReport): Promise<void> {
    if (report.partial || report.hotKeyStats.length === 0) return
    await Promise.all(
      report.hotKeyStats.map(async (stats) => {
        const hash = this.#hashOf(stats.key)
        const stored: StoredKeyStats = {
          ...stats,
          agentId: report.agentId,
          windowStart: report.windowStart,
          windowMs: report.windowMs,
        }
        const written = this.#redis.hset(hash, report.agentId, JSON.stringify(stored))
        await (this.#renewExpiry(hash)
          ? Promise.all([written, this.#redis.expire(hash, RETAIN_SECONDS)])
          : written)
      }),
    )
  }

  // The registered keys come back every window from every agent: their names are worked out (a SHA-256) once.
  #hashOf(key: string): string {
    let hash = this.#hashes.get(key)
    if (hash === undefined) {
      if (this.#hashes.size >= MAX_RENEWALS_KEPT) this.#hashes.clear()
      hash = this.#names.keyStatsKey(keyHash(key))
      this.#hashes.set(key, hash)
    }
    return hash
  }

  // Each hash's expiry is renewed at most every RENEW_MS by this replica: every agent writes every registered key's
  // statistics every window, and an EXPIRE with each write was half of what storing them cost (200 agents).
  #renewExpiry(hash: string): boolean {
    const now = Date.now()
    const last = this.#renewed.get(hash)
    if (last !== undefined && now - last < RENEW_MS) return false
    if (this.#renewed.size >= MAX_RENEWALS_KEPT) this.#renewed.clear()
    this.#renewed.set(hash, now)
    return true
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
