import type { HeatsinkNames } from '@heatsink/protocol'
import { type Clock, systemClock } from '@heatsink/sketch'
import type { Cluster, Redis } from 'ioredis'
import { InvalidSplitOptionError } from './errors.js'
import { FanOut } from './fan-out.js'
import { LayoutCache, type SplitLayout } from './layout.js'
import { ShardCounts } from './shard-counts.js'
import { StampClock } from './stamp-clock.js'
import { Transitions } from './transitions.js'

const HOUR = 3_600_000

/** Options of createSplitter. */
export interface SplitterOptions {
  /** The application's Redis: a standalone client or a Cluster. The splitter never closes it. */
  readonly redis: Redis | Cluster
  /** Heatsink's Redis names (createNames from @heatsink/protocol). */
  readonly names: HeatsinkNames
  /** This agent's id: lease owner and tie-breaker of write stamps. */
  readonly agentId: string
  readonly clock?: Clock
  /** Returns [0, 1); picks shards for writes and unrouted copy reads. Default Math.random. */
  readonly random?: () => number
  /**
   * How long a folded shard's closed gate keeps sending on writers that still believe the key is split (their
   * registry view lags). Default 24 h: far above any propagation delay.
   */
  readonly sealTtlMs?: number
  /** Lifetime of fold and reconciler leases; the holder renews them at a third of it. Default 10 s. */
  readonly leaseMs?: number
  /** How long fold() and reshard() wait for another agent's fold of the same key to end. Default 60 s. */
  readonly foldTimeoutMs?: number
  /**
   * How long a counter move stays in the key's journal after it is finished, for readers whose shard and base
   * reads straddled it. A read is a few milliseconds; default 30 s.
   */
  readonly journalGraceMs?: number
  /** How long the reconciler re-checks a folded layout for strays. Default: sealTtlMs. */
  readonly foldedRecheckMs?: number
  /**
   * Where the reconciler's leader lease (names.splitReconcilerLeaseKey) lives: Heatsink's control Redis, so that
   * the application's Redis holds no key of Heatsink's while nothing is split. Default: `redis`.
   */
  readonly control?: Redis | Cluster
}

/** Resolved timing settings. */
export interface SplitSettings {
  readonly sealTtlMs: number
  readonly leaseMs: number
  readonly foldTimeoutMs: number
  readonly journalGraceMs: number
  readonly foldedRecheckMs: number
  /** Backstop expiry of a key's touched set, refreshed on each write to it. */
  readonly helperTtlMs: number
}

/** Everything the operations of one splitter share. */
export interface SplitContext {
  readonly redis: Redis | Cluster
  readonly fanOut: FanOut
  /** Commands on the Redis of the reconciler's leader lease (SplitterOptions.control). */
  readonly controlFanOut: FanOut
  readonly names: HeatsinkNames
  readonly layouts: LayoutCache
  readonly transitions: Transitions
  readonly shardCounts: ShardCounts
  readonly clock: Clock
  readonly random: () => number
  readonly stamps: StampClock
  readonly agentId: string
  readonly settings: SplitSettings
}

/** Validates options, registers the scripts on the client, and builds the shared context. */
export function createContext(options: SplitterOptions): SplitContext {
  if (typeof options.agentId !== 'string' || options.agentId.length === 0) {
    throw new InvalidSplitOptionError('agentId', 'must be a non-empty string')
  }
  const sealTtlMs = positive('sealTtlMs', options.sealTtlMs ?? 24 * HOUR)
  const leaseMs = positive('leaseMs', options.leaseMs ?? 10_000)
  const journalGraceMs = positive('journalGraceMs', options.journalGraceMs ?? 30_000)
  // A merged gate must outlive the journal entries that refer to it, or a reader could match an entry against
  // a gate that has since expired and been created afresh.
  if (sealTtlMs < 2 * journalGraceMs) {
    throw new InvalidSplitOptionError(
      'sealTtlMs',
      `must be at least twice journalGraceMs (${journalGraceMs})`,
    )
  }
  const settings: SplitSettings = {
    sealTtlMs,
    leaseMs,
    foldTimeoutMs: positive('foldTimeoutMs', options.foldTimeoutMs ?? 60_000),
    journalGraceMs,
    foldedRecheckMs: positive('foldedRecheckMs', options.foldedRecheckMs ?? sealTtlMs),
    helperTtlMs: Math.max(HOUR, 10 * leaseMs),
  }
  const clock = options.clock ?? systemClock
  const fanOut = new FanOut(options.redis)
  return {
    redis: options.redis,
    fanOut,
    controlFanOut: options.control === undefined ? fanOut : new FanOut(options.control),
    names: options.names,
    layouts: new LayoutCache(options.names),
    transitions: new Transitions(clock),
    shardCounts: new ShardCounts(),
    clock,
    random: options.random ?? Math.random,
    stamps: new StampClock(clock),
    agentId: options.agentId,
    settings,
  }
}

/**
 * The layouts a read or removal on (key, n) involves, newest first: the caller's own (unless n = 1, the key
 * unsplit), then any this process is draining. Layouts that closed gates point to are found while reading.
 */
export function layoutsFor(ctx: SplitContext, key: string, n: number): SplitLayout[] {
  const layouts: SplitLayout[] = n > 1 ? [ctx.layouts.get(key, n)] : []
  for (const other of ctx.transitions.draining(key)) {
    if (other !== n && other > 1) layouts.push(ctx.layouts.get(key, other))
  }
  return layouts
}

function positive(option: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new InvalidSplitOptionError(option, `must be a finite number > 0, received ${value}`)
  }
  return value
}
