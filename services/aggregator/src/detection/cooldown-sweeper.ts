import type { RegistryEntry } from '@heatsink/protocol'
import type { Logger } from 'pino'
import type { Detector } from './detector.js'
import { isRegistryUnavailable, type RegistryPort } from './registry-port.js'
import type { SplitFormsWatch } from './split-forms-watch.js'
import type { WindowCounters } from './window-counters.js'

export interface CooldownSweeperOptions {
  registry: RegistryPort
  counters: WindowCounters
  detector: Detector
  now: () => number
  windowMs: number
  coolRps: number
  coolSeconds: number
  /** How long after a window ends its reports are taken as complete. */
  graceMs: number
  replicaId: string
  /** Demotes automatic splits whose reports show a command foreign to their kind. */
  splitForms: SplitFormsWatch
  log: Logger
}

/**
 * Demotes automatically promoted keys that stayed below the cool rate for the cool period: hysteresis, so a
 * key whose rate hovers near the hot threshold is not promoted and demoted every second. Also keeps the
 * detector's view of active keys current.
 *
 * Each sweep reads only the complete windows since the previous sweep, one value per active key and window,
 * and remembers per key since when it has been cool.
 */
export class CooldownSweeper {
  readonly #options: CooldownSweeperOptions
  readonly #coolSince = new Map<string, number>()
  #lastWindow: number | undefined

  constructor(options: CooldownSweeperOptions) {
    this.#options = options
  }

  /** One pass: refresh the active keys, demote cooled automatic ones and splits that met a foreign command. */
  async sweep(): Promise<void> {
    const { registry, detector, log } = this.#options
    try {
      const active = await registry.list()
      detector.setActive(active.map((entry) => entry.key))
      await this.#demoteCooled(active.filter((entry) => entry.source === 'auto'))
      await this.#options.splitForms.check(active)
    } catch (error) {
      if (!isRegistryUnavailable(error)) throw error
      log.warn('registry unavailable; cool-down sweep skipped')
    }
  }

  async #demoteCooled(entries: readonly RegistryEntry[]): Promise<void> {
    const { counters, detector, now, windowMs, coolRps, coolSeconds, graceMs, registry, replicaId, log } =
      this.#options
    const latest = Math.floor((now() - graceMs) / windowMs) * windowMs - windowMs
    const maxWindows = Math.ceil((coolSeconds * 1000) / windowMs)
    // The first sweep (a replica just started) reads the whole cool period back; later ones only new windows.
    const oldest = latest - (maxWindows - 1) * windowMs
    const first = this.#lastWindow === undefined ? oldest : Math.max(this.#lastWindow + windowMs, oldest)
    this.#lastWindow = latest
    const keys = entries.map((entry) => entry.key)
    const coolPerWindow = (coolRps * windowMs) / 1000
    let latestCounts: Array<{ count: number } | undefined> = []
    for (let window = first; window <= latest; window += windowMs) {
      latestCounts = await counters.read(keys, window)
      latestCounts.forEach((counts, i) => {
        const key = keys[i] as string
        if ((counts?.count ?? 0) < coolPerWindow) {
          if (!this.#coolSince.has(key)) this.#coolSince.set(key, window)
        } else {
          this.#coolSince.delete(key)
        }
      })
    }
    for (const key of [...this.#coolSince.keys()]) if (!keys.includes(key)) this.#coolSince.delete(key)

    // Demotions are logged with the newest window the cool-down was judged on: no request to trace them to.
    const changeLog = log.child({ window: latest })
    await Promise.all(
      entries.map(async (entry, i) => {
        const coolSince = this.#coolSince.get(entry.key)
        // Cool for the whole period, counted only from the window the promotion was made in: a fresh promotion
        // is not judged on windows from before it (a loaded replica can sweep a second after the promotion
        // while its newest complete window still predates it).
        const promotedWindow = Math.floor(entry.detectedAt / windowMs) * windowMs
        const coolFor = latest + windowMs - Math.max(coolSince ?? Number.POSITIVE_INFINITY, promotedWindow)
        if (coolFor < coolSeconds * 1000) return
        const rps = ((latestCounts[i]?.count ?? 0) * 1000) / windowMs
        const demoted = await registry.demote(entry.key, {
          actor: replicaId,
          reason: `below ${coolRps} req/s for ${coolSeconds} s`,
          requestsPerSecond: rps,
          onlySource: 'auto',
          log: changeLog,
        })
        this.#coolSince.delete(entry.key)
        detector.forget(entry.key)
        if (demoted) changeLog.info({ key: entry.key, rps }, 'demoted after cooling down')
      }),
    )
  }
}
