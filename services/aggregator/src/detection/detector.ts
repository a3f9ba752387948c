import type { Logger } from 'pino'
import type { Crossing } from '../ingest/window-counters.js'
import { chooseMitigation, type MitigationPolicyOptions } from './mitigation-policy.js'
import { isRegistryUnavailable, type PromotionRequest, type RegistryPort } from './registry-port.js'

export interface DetectorOptions {
  registry: RegistryPort
  policy: MitigationPolicyOptions
  /** Nominal window length, for turning window counts into rates. */
  windowMs: number
  hotRps: number
  /** Recorded as the actor of automatic promotions. */
  replicaId: string
  log: Logger
}

/**
 * Turns threshold crossings into automatic promotions. Keys already active are skipped without a database
 * round trip. A promotion that cannot be written while Postgres is down is kept and retried, latest traffic
 * first, so detection goes on through an outage and nothing it found is lost when Postgres returns.
 */
export class Detector {
  readonly #options: DetectorOptions
  readonly #active = new Set<string>()
  readonly #pending = new Map<string, PromotionRequest>()

  constructor(options: DetectorOptions) {
    this.#options = options
  }

  /** Promotions waiting for Postgres. */
  get pending(): number {
    return this.#pending.size
  }

  /** Replaces the set of keys known to be active (from the registry, refreshed by the sweeper). */
  setActive(keys: Iterable<string>): void {
    this.#active.clear()
    for (const key of keys) this.#active.add(key)
  }

  /** Forgets that a key is active, so a new crossing promotes it again (after a demotion). */
  forget(key: string): void {
    this.#active.delete(key)
  }

  /** Promotes every key that just crossed the hot threshold. */
  async onCrossings(crossings: readonly Crossing[]): Promise<void> {
    const { windowMs, hotRps, policy, replicaId } = this.#options
    await Promise.all(
      crossings.map((crossing) => {
        if (this.#active.has(crossing.key)) return undefined
        const requestsPerSecond = (crossing.count * 1000) / windowMs
        const { mitigation, splitFactor } = chooseMitigation({ ...crossing, windowMs }, policy)
        return this.#promote({
          key: crossing.key,
          mitigation,
          splitFactor,
          source: 'auto',
          actor: replicaId,
          reason: `cluster-wide ${Math.round(requestsPerSecond)} req/s reached ${hotRps} req/s`,
          requestsPerSecond,
          onsetAt: crossing.windowStart,
        })
      }),
    )
  }

  /** Retries promotions that failed while Postgres was unreachable. */
  async retryPending(): Promise<void> {
    const waiting = [...this.#pending.values()]
    for (const request of waiting) {
      this.#pending.delete(request.key)
      await this.#promote(request)
    }
  }

  async #promote(request: PromotionRequest): Promise<void> {
    const { registry, log } = this.#options
    try {
      const { changed } = await registry.promote(request)
      this.#active.add(request.key)
      if (changed)
        log.info(
          { key: request.key, mitigation: request.mitigation, rps: request.requestsPerSecond },
          'promoted',
        )
    } catch (error) {
      // The registry counts its own write failures; here only the retry decision is made.
      if (isRegistryUnavailable(error)) {
        this.#pending.set(request.key, request)
        log.warn({ key: request.key }, 'registry unavailable; promotion kept for retry')
      } else {
        log.error({ err: error, key: request.key }, 'promotion failed')
      }
    }
  }
}
