import type { Mitigation } from '@heatsink/protocol'
import {
  demotedChannel,
  type InvalidatedEvent,
  invalidatedChannel,
  type L1DroppedEvent,
  l1DroppedChannel,
  loadFailedChannel,
  promotedChannel,
  type ReportDroppedEvent,
  reportDroppedChannel,
} from './channels.js'
import type { InvalidationSource } from './stats.js'

/**
 * Publishes one agent's events on its diagnostics channels. Every method first asks whether the channel has a
 * subscriber (a property read): with none, no payload is built, so the paths that call these cost nothing more.
 */
export class AgentEvents {
  readonly agentId: string

  constructor(agentId: string) {
    this.agentId = agentId
  }

  promoted(key: string, mitigation: Mitigation, previous: Mitigation | undefined): void {
    if (promotedChannel.hasSubscribers) {
      promotedChannel.publish({ agentId: this.agentId, key, mitigation, previous })
    }
  }

  demoted(key: string, mitigation: Mitigation): void {
    if (demotedChannel.hasSubscribers) demotedChannel.publish({ agentId: this.agentId, key, mitigation })
  }

  /** True when someone listens for invalidations: callers skip working out which keys to report otherwise. */
  get watchingInvalidations(): boolean {
    return invalidatedChannel.hasSubscribers
  }

  invalidated(key: string | null, source: InvalidatedEvent['source']): void {
    if (invalidatedChannel.hasSubscribers) invalidatedChannel.publish({ agentId: this.agentId, key, source })
  }

  /** True when someone listens for L1 drops. */
  get watchingL1(): boolean {
    return l1DroppedChannel.hasSubscribers
  }

  l1Dropped(key: string, reason: L1DroppedEvent['reason'], source: InvalidationSource | undefined): void {
    if (l1DroppedChannel.hasSubscribers) {
      l1DroppedChannel.publish({ agentId: this.agentId, key, reason, source, cache: 'replies' })
    }
  }

  reportDropped(reason: ReportDroppedEvent['reason'], partial: boolean, error?: Error): void {
    if (reportDroppedChannel.hasSubscribers) {
      reportDroppedChannel.publish({ agentId: this.agentId, reason, partial, error })
    }
  }

  loadFailed(key: string, error: unknown, background: boolean): void {
    if (loadFailedChannel.hasSubscribers) {
      loadFailedChannel.publish({ agentId: this.agentId, key, error, background })
    }
  }
}
