import { randomUUID } from 'node:crypto'
import { claimLease, releaseLease } from '@heatsink/redis-script'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import { Ticker } from '../ticker.js'

/** Options of ReporterLease. */
export interface ReporterLeaseOptions {
  readonly redis: Redis | Cluster
  readonly leaseKey: string
  /** Shown in the lease's value and in logs; a random suffix keeps two replicas with one id apart. */
  readonly replicaId: string
  /** How long a claim lasts: a replica that dies leaves the role to another after at most this long. Default 15 s. */
  readonly ttlMs?: number
  readonly log?: Logger
}

/**
 * Which one replica exports the cluster-wide gauges: each replica tries to claim one Redis lease every third of
 * its TTL, and only the holder reports. Every replica reading the same registry and streams would otherwise
 * export the same numbers, and `sum()` over replicas would multiply them by the replica count.
 *
 * The holder keeps the lease by renewing it, so the role moves only when its holder stops (released at once) or
 * dies (after the TTL). While Redis is unreachable nobody can claim, and a holder that cannot renew stops
 * reporting: a gap in the series, never two reporters.
 */
export class ReporterLease {
  readonly #redis: Redis | Cluster
  readonly #key: string
  readonly #holder: string
  readonly #ttlMs: number
  readonly #log: Logger | undefined
  readonly #ticker: Ticker
  #heldUntil = 0

  constructor(options: ReporterLeaseOptions) {
    this.#redis = options.redis
    this.#key = options.leaseKey
    this.#holder = `${options.replicaId}/${randomUUID()}`
    this.#ttlMs = options.ttlMs ?? 15_000
    this.#log = options.log
    this.#ticker = new Ticker(
      'metrics reporter lease',
      Math.ceil(this.#ttlMs / 3),
      () => this.claim(),
      options.log,
    )
  }

  /** Whether this replica holds the lease now, by its last successful claim. */
  get held(): boolean {
    return performance.now() < this.#heldUntil
  }

  /** Claims or renews once. A failure (Redis down) counts as not holding, and is thrown for the ticker to log. */
  async claim(): Promise<boolean> {
    const askedAt = performance.now()
    const wasHeld = this.held
    try {
      const held = await claimLease(this.#redis, this.#key, this.#holder, this.#ttlMs)
      // Counted from before the request: Redis may have set the expiry a round trip earlier than we heard.
      this.#heldUntil = held ? askedAt + this.#ttlMs : 0
    } catch (error) {
      this.#heldUntil = 0
      throw error
    } finally {
      if (this.held !== wasHeld) {
        this.#log?.info(
          { holder: this.#holder },
          this.held ? 'reporting cluster gauges' : 'stopped reporting cluster gauges',
        )
      }
    }
    return this.held
  }

  /** Claims once (a failure is logged: the ticker retries), then keeps renewing. */
  async start(): Promise<void> {
    await this.claim().catch((error: unknown) =>
      this.#log?.warn({ err: error }, 'claiming the metrics reporter lease failed'),
    )
    this.#ticker.start()
  }

  /** Stops renewing and releases the lease, so another replica takes the role at its next claim. */
  async stop(): Promise<void> {
    await this.#ticker.stop()
    if (!this.held) return
    this.#heldUntil = 0
    await releaseLease(this.#redis, this.#key, this.#holder).catch((error: unknown) => {
      this.#log?.warn({ err: error }, 'releasing the metrics reporter lease failed; it expires by itself')
    })
  }
}
