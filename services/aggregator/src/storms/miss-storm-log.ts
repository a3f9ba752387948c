import type { MissStorm } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'

/** Storms kept (XADD MAXLEN ~): far more than an operator reads back, and a bounded stream. */
export const MISS_STORMS_KEPT = 1000
/** Most storms one listing returns. */
export const MAX_MISS_STORMS = 500

/** Which storms to list. */
export interface MissStormQuery {
  /** Only storms after this id (for following). */
  afterId?: string
  key?: string
  /** Default 50, at most MAX_MISS_STORMS. */
  limit?: number
}

/** A storm as the watch raises it; the log gives it its id. */
export type RaisedStorm = Omit<MissStorm, 'id' | 'type'>

/**
 * The miss storms raised, in a capped Redis stream beside the other live state, so every replica lists the same
 * storms and a storm one replica raised is on all of their feeds. The stream's entry id orders them.
 */
export class MissStormLog {
  readonly #redis: Redis | Cluster
  readonly #stream: string
  readonly #log: Logger | undefined

  constructor(redis: Redis | Cluster, stream: string, log?: Logger) {
    this.#redis = redis
    this.#stream = stream
    this.#log = log
  }

  /** Appends a storm; resolves to it with its id. */
  async append(storm: RaisedStorm): Promise<MissStorm> {
    const id = await this.#redis.xadd(
      this.#stream,
      'MAXLEN',
      '~',
      MISS_STORMS_KEPT,
      '*',
      'storm',
      JSON.stringify(storm),
    )
    return { id: String(id), type: 'miss_storm', ...storm }
  }

  /** Storms matching the query, newest first. */
  async recent(query: MissStormQuery = {}): Promise<MissStorm[]> {
    const limit = Math.min(MAX_MISS_STORMS, Math.max(1, query.limit ?? 50))
    const low = query.afterId === undefined ? '-' : `(${query.afterId}`
    // With a key filter the storms of other keys are read and dropped: the stream is capped, so this is bounded.
    const entries =
      query.key === undefined
        ? await this.#redis.xrevrange(this.#stream, '+', low, 'COUNT', limit)
        : await this.#redis.xrevrange(this.#stream, '+', low)
    const storms: MissStorm[] = []
    for (const [id, fields] of entries) {
      const storm = this.#decode(id, fields)
      if (storm === undefined || (query.key !== undefined && storm.key !== query.key)) continue
      storms.push(storm)
      if (storms.length >= limit) break
    }
    return storms
  }

  // Only this log writes the stream; an entry it cannot read (written by hand, say) is skipped, not fatal.
  #decode(id: string, fields: string[]): MissStorm | undefined {
    const text = fields[fields.indexOf('storm') + 1]
    try {
      const raised = JSON.parse(text ?? '') as RaisedStorm
      if (typeof raised.key !== 'string') throw new Error('no key')
      return { id, type: 'miss_storm', ...raised }
    } catch (error) {
      this.#log?.warn({ id, err: error }, 'unreadable miss storm entry skipped')
      return undefined
    }
  }
}
