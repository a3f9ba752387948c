import {
  type Mitigation,
  type RegistryEntry,
  type RegistryEvent,
  safeDecodeRegistryEvent,
  safeDecodeSnapshot,
  verifyRegistryMessage,
} from '@heatsink/protocol'
import type { Clock } from '@heatsink/sketch'
import type { AgentCounters } from '../events/stats.js'
import type { AgentLogger } from '../options/agent-options.js'
import { canonicalMitigation, HotKey, type MitigationStrategy } from './hot-key.js'

/** What a RegistryView reads from Redis and whom it tells about changes. */
export interface RegistryViewOptions {
  /** The snapshot hash's `snapshot` field (an encoded RegistrySnapshot), or null when there is none. */
  readSnapshot(): Promise<string | null>
  /** The snapshot hash's `version` field, or null. */
  readVersion(): Promise<string | null>
  strategyFor(mitigation: Mitigation): MitigationStrategy
  /** A key entered (before undefined), left (after undefined) or changed mitigation. */
  onChange(hot: HotKey, before: Mitigation | undefined, after: Mitigation | undefined): void
  /** Whether the periodic check may run now: only while subscribed, since a load must follow the subscription. */
  canCheck(): boolean
  /** When set, events and snapshots apply only with a valid MAC under this key (see registry-mac.ts). */
  registryKey?: string | null
  counters: AgentCounters
  log: AgentLogger
}

// Events that arrive while a snapshot loads wait here; past this many, the load is simply repeated.
const MAX_BUFFERED_EVENTS = 10_000
// Reloads in a row before leaving a persisting gap to the periodic check, so a bad publisher cannot spin us.
const MAX_RELOADS_IN_A_ROW = 5

/**
 * The registry as the aggregator publishes it. The subscription comes first (the owner subscribes before
 * calling reload()); the snapshot hash is read next; then events apply only in version order, each exactly one
 * above the view's version. Events that arrive during a load wait and apply after it; an event beyond the next
 * version (a lost message), a reconnect (the owner calls reload()), or a periodic check that finds the stored
 * version different from the view's, reloads the snapshot. Bad messages are counted and set aside, never thrown.
 */
export class RegistryView {
  readonly #keys = new Map<string, HotKey>()
  readonly #options: RegistryViewOptions
  #version = 0
  #loaded = false
  #buffering = true
  #buffer: RegistryEvent[] = []
  #loading: Promise<void> | undefined
  #again = false
  #timer: unknown
  #clock: Clock | undefined

  constructor(options: RegistryViewOptions) {
    this.#options = options
  }

  /** The registered key, or undefined: the one lookup on every request. */
  get(key: string): HotKey | undefined {
    return this.#keys.get(key)
  }

  get version(): number {
    return this.#version
  }

  /** True once a snapshot has been loaded (or found absent or unreadable as a snapshot). */
  get loaded(): boolean {
    return this.#loaded
  }

  /** The registered keys. */
  keys(): IterableIterator<string> {
    return this.#keys.keys()
  }

  values(): IterableIterator<HotKey> {
    return this.#keys.values()
  }

  get size(): number {
    return this.#keys.size
  }

  /** Handles one message from the registry channel. */
  onMessage(text: string): void {
    const decoded = safeDecodeRegistryEvent(text)
    if (!decoded.ok) {
      this.#options.counters.badMessages++
      this.#options.log.warn({ error: decoded.error.message }, 'registry message set aside')
      return
    }
    if (!this.#authentic(text)) {
      this.#options.log.warn(
        { version: decoded.value.version },
        'registry message without a valid mac set aside',
      )
      return
    }
    const event = decoded.value
    if (this.#buffering) {
      if (this.#buffer.length < MAX_BUFFERED_EVENTS) this.#buffer.push(event)
      else this.#again = true
      return
    }
    if (event.version <= this.#version) return
    if (event.version === this.#version + 1) {
      this.#apply(event)
      return
    }
    this.#options.log.info({ version: this.#version, received: event.version }, 'registry gap, reloading')
    this.#buffer.push(event)
    void this.reload()
  }

  /** Loads the snapshot (again); concurrent calls share one load, and a call during a load loads once more. */
  reload(): Promise<void> {
    if (this.#loading !== undefined) {
      this.#again = true
      return this.#loading
    }
    this.#buffering = true
    this.#loading = this.#loadUntilSettled().finally(() => {
      this.#loading = undefined
    })
    return this.#loading
  }

  /** Starts comparing the stored version with ours every `everyMs`. */
  startChecks(clock: Clock, everyMs: number): void {
    this.#clock = clock
    const tick = () => {
      void this.check().finally(() => {
        if (this.#clock !== undefined) this.#timer = clock.setTimeout(tick, everyMs)
      })
    }
    this.#timer = clock.setTimeout(tick, everyMs)
  }

  stopChecks(): void {
    this.#clock?.clearTimeout(this.#timer)
    this.#clock = undefined
  }

  /** Reloads when the snapshot hash holds another version than the view. */
  async check(): Promise<void> {
    if (this.#loading !== undefined || !this.#options.canCheck()) return
    let stored: string | null
    try {
      stored = await this.#options.readVersion()
    } catch (error) {
      this.#options.log.debug({ error: (error as Error).message }, 'registry version check failed')
      return
    }
    const version = stored === null ? 0 : Number(stored)
    if (version !== this.#version) {
      this.#options.log.info({ version: this.#version, stored: version }, 'registry behind, reloading')
      await this.reload()
    }
  }

  async #loadUntilSettled(): Promise<void> {
    for (let round = 0; ; round++) {
      this.#again = false
      const ok = await this.#loadOnce()
      if (!ok || !this.#again || round + 1 >= MAX_RELOADS_IN_A_ROW) break
    }
    // Whatever is still buffered is older than the view or beyond a gap the next check will close.
    this.#buffer = []
    this.#buffering = false
  }

  async #loadOnce(): Promise<boolean> {
    let text: string | null
    try {
      text = await this.#options.readSnapshot()
    } catch (error) {
      this.#options.log.warn({ error: (error as Error).message }, 'registry snapshot read failed')
      this.#drain()
      return false
    }
    if (text === null) {
      this.#replace([], 0)
    } else {
      const decoded = safeDecodeSnapshot(text)
      if (decoded.ok && !this.#authentic(text)) {
        // Kept as it is: a forged snapshot must not replace a genuine view. The periodic check retries.
        this.#options.log.warn(
          { version: decoded.value.version },
          'registry snapshot without a valid mac set aside',
        )
      } else if (decoded.ok) {
        this.#replace(decoded.value.entries, decoded.value.version)
      } else {
        this.#options.counters.badMessages++
        this.#options.log.warn({ error: decoded.error.message }, 'registry snapshot set aside')
      }
    }
    if (this.#loaded) this.#options.counters.registryReloads++
    this.#loaded = true
    this.#drain()
    return true
  }

  // With a key, a message whose MAC fails is forged (or from a misconfigured aggregator), never applied: applying
  // a forged event with the next version would make the view drop the real one as a duplicate.
  #authentic(text: string): boolean {
    const key = this.#options.registryKey
    if (key === undefined || key === null || verifyRegistryMessage(text, key)) return true
    this.#options.counters.badMessages++
    this.#options.counters.forgedMessages++
    return false
  }

  // Applies buffered events in version order; a hole before the next one asks for another load.
  #drain(): void {
    const events = this.#buffer.sort((a, b) => a.version - b.version)
    this.#buffer = []
    for (const event of events) {
      if (event.version <= this.#version) continue
      if (event.version !== this.#version + 1) {
        this.#again = true
        return
      }
      this.#apply(event)
    }
  }

  #apply(event: RegistryEvent): void {
    if (event.type === 'demote') this.#remove(event.key)
    else this.#upsert(event.entry)
    this.#version = event.version
  }

  #replace(entries: readonly RegistryEntry[], version: number): void {
    const incoming = new Set(entries.map((entry) => entry.key))
    for (const key of [...this.#keys.keys()]) if (!incoming.has(key)) this.#remove(key)
    for (const entry of entries) this.#upsert(entry)
    this.#version = version
  }

  #upsert(entry: RegistryEntry): void {
    const strategy = this.#options.strategyFor(entry.mitigation)
    const existing = this.#keys.get(entry.key)
    if (existing === undefined) {
      const hot = new HotKey(entry, strategy)
      this.#keys.set(entry.key, hot)
      this.#options.onChange(hot, undefined, entry.mitigation)
      return
    }
    const before = existing.mitigation
    existing.entry = entry
    existing.mitigation = canonicalMitigation(entry.mitigation)
    existing.strategy = strategy
    if (before !== entry.mitigation) this.#options.onChange(existing, before, entry.mitigation)
  }

  #remove(key: string): void {
    const hot = this.#keys.get(key)
    if (hot === undefined) return
    this.#keys.delete(key)
    hot.registered = false
    this.#options.onChange(hot, hot.mitigation, undefined)
  }
}
