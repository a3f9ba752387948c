import type { HeatsinkNames, NodeHistoryPoint, NodesView } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'

/** Samples kept for the charts: five minutes at one a second. */
export const HISTORY_LENGTH = 300

/** A node's ops/s in the last sample before a key's promotion, kept while the key stays registered. */
export interface OpsBefore {
  readonly detectedAt: number
  readonly node: string
  readonly opsPerSecond: number | null
}

// One history entry: when, and per node [ops/s, cpu ratio]; short names, as 300 of them are read per node page.
interface HistoryEntry {
  at: number
  n: Record<string, [number | null, number | null]>
}

/**
 * The node view in Redis, written by the sampling replica and read by every replica, so any of them serves the
 * same picture. The latest view expires unless renewed, so a view nobody samples any more is not shown as live.
 */
export class NodeStore {
  readonly #redis: Redis | Cluster
  readonly #names: HeatsinkNames

  constructor(redis: Redis | Cluster, names: HeatsinkNames) {
    this.#redis = redis
    this.#names = names
  }

  /** Stores the latest view (kept `ttlMs`) and adds its point to the history. */
  async write(view: NodesView, ttlMs: number): Promise<void> {
    const entry: HistoryEntry = { at: view.sampledAt ?? Date.now(), n: {} }
    for (const node of view.nodes) {
      if (node.up) entry.n[node.node] = [node.figures?.opsPerSecond ?? null, node.figures?.cpuRatio ?? null]
    }
    const { nodesLatestKey, nodesHistoryKey } = this.#names
    // Two keys that may sit on two Cluster nodes: written side by side, not atomically; the history only charts.
    await Promise.all([
      this.#redis.set(nodesLatestKey, JSON.stringify(view), 'PX', ttlMs),
      this.#redis
        .multi()
        .lpush(nodesHistoryKey, JSON.stringify(entry))
        .ltrim(nodesHistoryKey, 0, HISTORY_LENGTH - 1)
        .pexpire(nodesHistoryKey, HISTORY_LENGTH * 1000)
        .exec(),
    ])
  }

  /** The latest view; undefined when none is kept (sampling off, or its replica stopped). */
  async latest(): Promise<NodesView | undefined> {
    const stored = await this.#redis.get(this.#names.nodesLatestKey)
    return stored === null ? undefined : parseJson<NodesView>(stored)
  }

  /** `node`'s recent points, oldest first. */
  async history(node: string): Promise<NodeHistoryPoint[]> {
    const points: NodeHistoryPoint[] = []
    for (const entry of await this.#entries()) {
      const figures = entry.n[node]
      if (figures !== undefined) points.push({ at: entry.at, opsPerSecond: figures[0], cpuRatio: figures[1] })
    }
    return points.reverse()
  }

  /**
   * `node`'s highest ops/s in the points from `from` to `to`; undefined when the history does not reach back to
   * `to` (sampling began later), null when the node gave no figure then.
   */
  async peakOps(node: string, from: number, to: number): Promise<number | null | undefined> {
    const entries = await this.#entries()
    if (!entries.some((entry) => entry.at <= to)) return undefined
    let peak: number | null = null
    for (const entry of entries) {
      const ops = entry.n[node]?.[0] ?? null
      if (entry.at >= from && entry.at <= to && ops !== null) peak = Math.max(peak ?? 0, ops)
    }
    return peak
  }

  /** The kept "before" figures, by key. */
  async befores(): Promise<Map<string, OpsBefore>> {
    const fields = await this.#redis.hgetall(this.#names.nodesBeforeKey)
    const found = new Map<string, OpsBefore>()
    for (const [key, value] of Object.entries(fields)) {
      const before = parseJson<OpsBefore>(value)
      if (before !== undefined) found.set(key, before)
    }
    return found
  }

  /** Keeps new "before" figures and forgets those of keys no longer registered. */
  async updateBefores(kept: ReadonlyMap<string, OpsBefore>, forgotten: readonly string[]): Promise<void> {
    const key = this.#names.nodesBeforeKey
    const writes: Array<Promise<unknown>> = []
    if (kept.size > 0) {
      const fields = Object.fromEntries([...kept].map(([name, before]) => [name, JSON.stringify(before)]))
      writes.push(this.#redis.hset(key, fields))
    }
    if (forgotten.length > 0) writes.push(this.#redis.hdel(key, ...forgotten))
    await Promise.all(writes)
  }

  async #entries(): Promise<HistoryEntry[]> {
    const raw = await this.#redis.lrange(this.#names.nodesHistoryKey, 0, -1)
    return raw.map((text) => parseJson<HistoryEntry>(text)).filter((entry) => entry !== undefined)
  }
}

// Written by this module only; an unreadable value is skipped rather than failing the request.
function parseJson<T>(value: string): T | undefined {
  try {
    return JSON.parse(value) as T
  } catch {
    return undefined
  }
}
