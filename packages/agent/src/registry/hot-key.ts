import { type Mitigation, Mitigation as MitigationSchema, type RegistryEntry } from '@heatsink/protocol'
import type { Candidate } from '@heatsink/sketch'
import type { Loader, LoadOptions } from '../get-or-load/loader.js'
import type { KeyReplies } from '../l1/reply-cache.js'

/** One registered key as this agent sees it, with its mitigation and its counters for the open window. */
export class HotKey {
  readonly key: string
  entry: RegistryEntry
  mitigation: Mitigation
  /** Serves this key's getOrLoad; set from the mitigation whenever it changes. */
  strategy: MitigationStrategy
  l1Hits = 0
  l1Misses = 0
  /** L1's reads of the key at Redis (fills); reads that waited on a fill in flight shared it. */
  l1Fills = 0
  /** Reads that found nothing. */
  misses = 0
  /** coalesce: plain reads that sent a GET, and plain reads that shared one already in flight. */
  readsSent = 0
  readsJoined = 0
  /** local_cache: the key's L1 entry as last found, kept and cleared by ReplyCache (see ReplySlot). */
  replies: KeyReplies | undefined = undefined
  /** The recorder's candidate counting this key while it is pinned (see recordRegistered), else undefined. */
  candidate: Candidate | undefined = undefined
  /** True while the registry view holds this key; false once demoted (a later promotion is a new HotKey). */
  registered = true

  constructor(entry: RegistryEntry, strategy: MitigationStrategy) {
    this.key = entry.key
    this.entry = entry
    this.mitigation = canonicalMitigation(entry.mitigation)
    this.strategy = strategy
  }

  resetWindow(): void {
    this.l1Hits = 0
    this.l1Misses = 0
    this.l1Fills = 0
    this.misses = 0
    this.readsSent = 0
    this.readsJoined = 0
  }
}

// The mitigations as this module's string constants. A registry entry's mitigation was parsed from JSON, a string of
// its own, and every read compares it with a constant ('local_cache'): kept as the constant, that compare is one
// pointer compare rather than a comparison of characters (a tenth of an L1 hit's own instructions).
const CANONICAL = new Map<string, Mitigation>(MitigationSchema.options.map((name) => [name, name]))

/** `mitigation` as the one string constant of its name. */
export function canonicalMitigation(mitigation: Mitigation): Mitigation {
  return CANONICAL.get(mitigation) ?? mitigation
}

/**
 * What a key's mitigation means to getOrLoad, and what the agent does when a key takes or loses it. Plain
 * commands of every front door go through the router, which reads the mitigation itself; enter and leave run
 * when a key takes or loses the mitigation.
 */
export interface MitigationStrategy {
  /** agent.getOrLoad of the key. */
  load<T>(name: string, hot: HotKey, loader: Loader<T>, options: LoadOptions): Promise<T>
  enter(hot: HotKey): void
  leave(hot: HotKey): void
}
