import { formNames, splitKindOf } from '@heatsink/commands'
import type { Logger } from 'pino'
import type { Counter } from 'prom-client'
import type { Crossing } from './hot-key-rule.js'
import { chooseMitigation, isWriteHot, type MitigationPolicyOptions } from './mitigation-policy.js'
import type { RecentForms } from './recent-forms.js'
import { isRegistryUnavailable, type PromotionRequest, type RegistryPort } from './registry-port.js'

export interface DetectorOptions {
  registry: RegistryPort
  policy: MitigationPolicyOptions
  /** The command forms reported on a key recently: whether a write-hot key may be split. */
  forms: Pick<RecentForms, 'seen'>
  /** Nominal window length, for turning window counts into rates. */
  windowMs: number
  hotRps: number
  /** Recorded as the actor of automatic promotions. */
  replicaId: string
  log: Logger
  /** Counts promotions given up after MAX_PROMOTION_ATTEMPTS failures that were not an outage. */
  abandoned?: Counter
}

/**
 * Attempts at a promotion that fails for a reason other than an outage (a constraint or encoding error, a bug)
 * before it is given up. Such a failure may not pass by itself, so retrying forever would only repeat it; a few
 * retries ride out a transient one (a serialization failure, a deadlock).
 */
export const MAX_PROMOTION_ATTEMPTS = 3

interface PendingPromotion {
  request: PromotionRequest
  /** Failures so far that were not an outage. */
  failures: number
}

/**
 * Turns threshold crossings into automatic promotions. Keys already active are skipped without a database
 * round trip. A promotion that cannot be written while Postgres is down is kept and retried, latest traffic
 * first, so detection goes on through an outage and nothing it found is lost when Postgres returns. Any other
 * failure is logged at error level and retried on the same schedule; after MAX_PROMOTION_ATTEMPTS of them the
 * promotion is abandoned, logged and counted, and the key's next crossing starts afresh.
 */
export class Detector {
  readonly #options: DetectorOptions
  readonly #active = new Set<string>()
  readonly #pending = new Map<string, PendingPromotion>()

  constructor(options: DetectorOptions) {
    this.#options = options
  }

  /** Promotions waiting to be retried. */
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
    const { windowMs, hotRps, policy, replicaId, forms } = this.#options
    await Promise.all(
      crossings.map(async (crossing) => {
        if (this.#active.has(crossing.key)) return undefined
        const requestsPerSecond = (crossing.count * 1000) / windowMs
        const shape = { ...crossing, windowMs }
        // Forms decide only whether a write-hot key may be split; a read-hot key's promotion does not wait on them.
        const seen = isWriteHot(shape, policy) ? await forms.seen(crossing.key, crossing.windowStart) : 0
        const choice = chooseMitigation({ ...shape, forms: seen }, policy)
        if (choice === undefined) {
          this.#options.log.debug(
            { key: crossing.key, forms: formNames(seen), rps: Math.round(requestsPerSecond) },
            'write-hot key left unmitigated: its commands are not one split kind',
          )
          return undefined
        }
        const { mitigation, splitFactor } = choice
        // A key still failing keeps its count, so a key that stays hot cannot retry a lasting failure forever.
        const failures = this.#pending.get(crossing.key)?.failures ?? 0
        return this.#promote(
          {
            key: crossing.key,
            mitigation,
            splitFactor,
            source: 'auto',
            actor: replicaId,
            reason:
              `cluster-wide ${Math.round(requestsPerSecond)} req/s reached ${hotRps} req/s` +
              (mitigation === 'split'
                ? `; commands seen: ${formNames(seen).join(', ')} (${splitKindOf(seen)})`
                : ''),
            requestsPerSecond,
            onsetAt: crossing.windowStart,
            // No request to trace an automatic promotion to: its lines carry the window that crossed instead.
            log: this.#options.log.child({ window: crossing.windowStart }),
          },
          failures,
        )
      }),
    )
  }

  /** Retries promotions that failed (while Postgres was unreachable, or otherwise). */
  async retryPending(): Promise<void> {
    const waiting = [...this.#pending.values()]
    for (const { request, failures } of waiting) {
      await this.#promote(request, failures)
    }
  }

  async #promote(request: PromotionRequest, failures = 0): Promise<void> {
    const { registry } = this.#options
    const log = request.log ?? this.#options.log
    // This attempt supersedes any waiting one for the key; a failure below puts it back.
    this.#pending.delete(request.key)
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
        this.#pending.set(request.key, { request, failures })
        log.warn({ key: request.key }, 'registry unavailable; promotion kept for retry')
        return
      }
      const attempts = failures + 1
      if (attempts < MAX_PROMOTION_ATTEMPTS) {
        this.#pending.set(request.key, { request, failures: attempts })
        log.error({ err: error, key: request.key, attempts }, 'promotion failed; it will be retried')
        return
      }
      this.#options.abandoned?.inc()
      log.error({ err: error, key: request.key, attempts }, 'promotion failed repeatedly; abandoned')
    }
  }
}
