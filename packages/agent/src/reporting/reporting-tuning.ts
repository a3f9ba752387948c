import { type DetectionTuning, safeDecodeTuning, verifyRegistryMessage } from '@heatsink/protocol'
import type { WindowRecorder } from '@heatsink/sketch'
import type { AgentCounters } from '../events/stats.js'
import type { AgentLogger } from '../options/agent-options.js'

/** What ReportingTuning needs from the agent. */
export interface ReportingTuningOptions {
  recorder: WindowRecorder
  windowMs: number
  /** The report floor the agent was configured with: the control plane may lower it, never raise it. */
  configuredFloor: number
  /** The keys the registry holds now: pinned, so their cluster-wide rate stays exact for the cool-down. */
  registeredKeys: () => Iterable<string>
  now: () => number
  /** With a registry key, only messages with a valid MAC are applied. */
  registryKey: string | null
  counters: AgentCounters
  log: AgentLogger
}

/**
 * Applies the control plane's detection tuning (`DetectionTuning` in @heatsink/protocol) to the agent's recorder:
 * the report floor sized to the fleet, and the pinned keys, which are the registered keys plus the keys the
 * aggregators are watching, each until its watch lapses. Replicas publish independently, so watched keys are
 * the union of their messages.
 */
export class ReportingTuning {
  readonly #options: ReportingTuningOptions
  // Watched key -> until when (epoch ms).
  readonly #watched = new Map<string, number>()
  #floor: number

  constructor(options: ReportingTuningOptions) {
    this.#options = options
    this.#floor = options.configuredFloor
  }

  /** The report floor in force. */
  get reportFloor(): number {
    return this.#floor
  }

  /** Keys watched now. */
  get watchedKeys(): number {
    return this.#watched.size
  }

  /** A message from the tuning channel or key; malformed or forged ones are counted and ignored. */
  receive(text: string): void {
    const { registryKey, counters, log } = this.#options
    const decoded = safeDecodeTuning(text)
    if (!decoded.ok) {
      counters.badMessages++
      log.debug({ error: decoded.error.message }, 'tuning message refused')
      return
    }
    if (registryKey !== null && !verifyRegistryMessage(text, registryKey)) {
      counters.badMessages++
      counters.forgedMessages++
      return
    }
    this.apply(decoded.value)
  }

  /** Applies a decoded message. */
  apply(tuning: DetectionTuning): void {
    const { recorder, configuredFloor, windowMs, now } = this.#options
    const floor = Math.min(configuredFloor, tuning.reportFloor)
    if (floor !== this.#floor) {
      this.#floor = floor
      recorder.setReportFloor(floor)
    }
    const until = now() + tuning.watchWindows * windowMs
    let added = false
    for (const key of tuning.watch) {
      if (!this.#watched.has(key)) added = true
      if ((this.#watched.get(key) ?? 0) < until) this.#watched.set(key, until)
    }
    if (added) this.repin()
  }

  /** Drops lapsed watches and pins registered and watched keys; called at every window end and registry change. */
  repin(): void {
    const at = this.#options.now()
    for (const [key, until] of this.#watched) if (until <= at) this.#watched.delete(key)
    const pinned = new Set(this.#options.registeredKeys())
    for (const key of this.#watched.keys()) pinned.add(key)
    this.#options.recorder.pin(pinned)
  }
}
