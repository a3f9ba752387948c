import {
  encodeInvalidation,
  MAX_INVALIDATION_KEYS,
  safeDecodeInvalidation,
  WIRE_VERSION,
} from '@heatsink/protocol'
import type { Clock } from '@heatsink/sketch'
import type { L1Cache } from './l1-cache.js'
import type { AgentLogger } from './options.js'
import type { AgentCounters } from './stats.js'

/** What the bus needs to send and whom it tells. */
export interface InvalidationBusOptions {
  /** PUBLISH on the invalidation channel. */
  publish(message: string): Promise<unknown>
  agentId: string
  clock: Clock
  l1: L1Cache
  counters: AgentCounters
  log: AgentLogger
}

/**
 * L1 invalidation between agents (pub/sub) and from Redis itself (tracking). An agent that wrote keys has already
 * evicted them from its own L1; it announces them so every other agent evicts too, and skips its own
 * announcement when it comes back. Tracking messages name keys some client changed, or are null: Redis
 * flushed, so everything goes.
 */
export class InvalidationBus {
  readonly #options: InvalidationBusOptions

  constructor(options: InvalidationBusOptions) {
    this.#options = options
  }

  /** Announces that `keys` changed; fire and forget, as a broadcast that fails cannot be taken back. */
  publish(keys: readonly string[]): void {
    const { agentId, clock, log } = this.#options
    for (let start = 0; start < keys.length; start += MAX_INVALIDATION_KEYS) {
      const message = encodeInvalidation({
        v: WIRE_VERSION,
        kind: 'invalidate',
        origin: agentId,
        keys: keys.slice(start, start + MAX_INVALIDATION_KEYS),
        at: clock.now(),
      })
      this.#options.publish(message).catch((error: unknown) => {
        log.warn({ error: (error as Error).message, keys: keys.length }, 'invalidation publish failed')
      })
    }
  }

  /** Handles one message from the invalidation channel. */
  receive(text: string): void {
    const decoded = safeDecodeInvalidation(text)
    if (!decoded.ok) {
      this.#options.counters.badMessages++
      this.#options.log.warn({ error: decoded.error.message }, 'invalidation message set aside')
      return
    }
    if (decoded.value.origin === this.#options.agentId) return
    for (const key of decoded.value.keys) this.#options.l1.invalidate(key, 'pubsub')
  }

  /** Handles one `__redis__:invalidate` message: the keys that changed, or null for a flush. */
  receiveTracking(payload: Buffer | Buffer[] | null): void {
    const l1 = this.#options.l1
    if (payload === null) {
      l1.invalidateAll('tracking')
      return
    }
    if (!Array.isArray(payload)) {
      l1.invalidate(payload.toString(), 'tracking')
      return
    }
    for (const key of payload) l1.invalidate(key.toString(), 'tracking')
  }
}
