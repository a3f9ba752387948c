import { channel } from 'node:diagnostics_channel'
import type { Mitigation } from '@heatsink/protocol'
import type { InvalidationSource } from './stats.js'

/**
 * The agent's diagnostics channels (node:diagnostics_channel), named as undici names its own
 * (`undici:request:create`): `heatsink:agent:<event>`. Subscribe with `diagnostics_channel.subscribe(name, fn)`;
 * nothing is built or published while a channel has no subscriber.
 */
export const AGENT_CHANNELS = {
  /** PromotedEvent: the registry gave a key a mitigation, or changed it. */
  promoted: 'heatsink:agent:promoted',
  /** DemotedEvent: a key left the registry. */
  demoted: 'heatsink:agent:demoted',
  /** InvalidatedEvent: a registered key changed (or every key may have), so L1 and loads in flight forget it. */
  invalidated: 'heatsink:agent:invalidated',
  /** L1DroppedEvent: an entry left L1 before its lifetime was over. */
  l1Dropped: 'heatsink:agent:l1Dropped',
  /** ReportDroppedEvent: a window's (or a partial) report did not reach the report stream. */
  reportDropped: 'heatsink:agent:reportDropped',
  /** LoadFailedEvent: a getOrLoad loader threw or rejected. */
  loadFailed: 'heatsink:agent:loadFailed',
} as const

/** Every event names the agent that published it (its agentId). */
interface AgentEvent {
  agentId: string
}

export interface PromotedEvent extends AgentEvent {
  key: string
  mitigation: Mitigation
  /** The key's mitigation before, when it changed mitigation rather than entering the registry. */
  previous: Mitigation | undefined
}

export interface DemotedEvent extends AgentEvent {
  key: string
  /** The mitigation the key had. */
  mitigation: Mitigation
}

export interface InvalidatedEvent extends AgentEvent {
  /** The key, or null when every key may have changed (a flush, or a lost invalidation channel). */
  key: string | null
  /**
   * local: written through this process (announced to the other agents); pubsub: announced by another agent;
   * tracking: reported by Redis (a write that bypassed the agents, or a flush); channelLoss: an invalidation
   * channel went down, so no cached value can be vouched for.
   */
  source: Exclude<InvalidationSource, 'registry'>
}

export interface L1DroppedEvent extends AgentEvent {
  key: string
  /**
   * evicted: the LRU was full and pushed the entry out for another; invalidated: the entry could no longer be
   * vouched for, `source` says why (a write: local, pubsub, tracking; channelLoss; registry: the key left
   * local_cache). Entries that simply outlive their lifetime are not reported.
   */
  reason: 'evicted' | 'invalidated'
  source: InvalidationSource | undefined
  /**
   * Which L1: 'replies', the one L1 every front door and getOrLoad share. 'values' (the second L1 createAgent's
   * get and getOrLoad once had) is no longer sent; it stays in the type for subscribers that still test for it.
   */
  cache: 'values' | 'replies'
}

export interface ReportDroppedEvent extends AgentEvent {
  /**
   * busy: the previous report was still in flight; disconnected: the report connection was not ready;
   * failed: Redis refused it or it timed out (`error`). The next report carries the count of dropped ones.
   */
  reason: 'busy' | 'disconnected' | 'failed'
  /** True for a fast-path report sent mid-window. */
  partial: boolean
  error: Error | undefined
}

export interface LoadFailedEvent extends AgentEvent {
  key: string
  error: unknown
  /** True for a background refresh (no caller saw the error; the stale value went on being served). */
  background: boolean
}

export const promotedChannel = channel(AGENT_CHANNELS.promoted)
export const demotedChannel = channel(AGENT_CHANNELS.demoted)
export const invalidatedChannel = channel(AGENT_CHANNELS.invalidated)
export const l1DroppedChannel = channel(AGENT_CHANNELS.l1Dropped)
export const reportDroppedChannel = channel(AGENT_CHANNELS.reportDropped)
export const loadFailedChannel = channel(AGENT_CHANNELS.loadFailed)
