import {
  encodeInvalidation,
  MAX_INVALIDATION_KEYS,
  safeDecodeInvalidation,
  WIRE_VERSION,
} from '@heatsink/protocol'
import type { Clock } from '@heatsink/sketch'
import type { AgentEvents } from '../events/agent-events.js'
import type { AgentCounters, InvalidationSource } from '../events/stats.js'
import type { AgentLogger } from '../options/agent-options.js'

/** What an invalidation reaches: L1 and the stampede guard, in the agent. */
export interface Invalidate {
  key(name: string, source: InvalidationSource): void
  all(source: InvalidationSource): void
}

/** What the bus needs to send and whom it tells. */
export interface InvalidationBusOptions {
  /** PUBLISH on the invalidation channel. */
  publish(message: string): Promise<unknown>
  agentId: string
  clock: Clock
  invalidate: Invalidate
  /** Told of each key invalidated here and by other agents, and of every key Redis tracking reports. */
  events: AgentEvents
  counters: AgentCounters
  log: AgentLogger
}

/**
 * Invalidation between agents (pub/sub) and from Redis itself (tracking), of L1 and of loads in flight. An agent that wrote keys has already
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
    const { agentId, clock, log, events } = this.#options
    if (events.watchingInvalidations) for (const key of keys) events.invalidated(key, 'local')
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
    const { invalidate, events } = this.#options
    for (const key of decoded.value.keys) {
      events.invalidated(key, 'pubsub')
      invalidate.key(key, 'pubsub')
    }
  }

  /** Handles one `__redis__:invalidate` message: the keys that changed, or null for a flush. */
  receiveTracking(payload: Buffer | Buffer[] | null): void {
    const { invalidate, events } = this.#options
    if (payload === null) {
      invalidate.all('tracking')
      return
    }
    for (const key of Array.isArray(payload) ? payload : [payload]) {
      const name = key.toString()
      events.invalidated(name, 'tracking')
      invalidate.key(name, 'tracking')
    }
  }
}
