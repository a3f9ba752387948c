import { formNames, splitKindOf } from '@heatsink/commands'
import type { RegistryEntry } from '@heatsink/protocol'
import type { Logger } from 'pino'
import type { Detector } from './detector.js'
import type { RecentForms } from './recent-forms.js'
import type { RegistryPort } from './registry-port.js'

export interface SplitFormsWatchOptions {
  registry: RegistryPort
  forms: RecentForms
  detector: Detector
  now: () => number
  replicaId: string
  log: Logger
}

// Each check reads the open window and the two before it: a window's final reports arrive just after it closes,
// possibly after the check that first read it as the previous window.
const WINDOWS_PER_CHECK = 3

/**
 * Demotes an automatically split key once its reports show a command form outside one split kind (a SET on a
 * counter, an SDIFF on a set, a GETRANGE anywhere): the agents fold the key back for such a command, and keeping
 * it split would split it again behind the next INCR. The forms are judged together with those seen since the key
 * was split (from the forms memory on first sight), so a key whose traffic changes kind is demoted too. Manual
 * splits are the operator's decision and are left alone; the API shows their forms.
 */
export class SplitFormsWatch {
  readonly #options: SplitFormsWatchOptions
  // Per split key, every form seen since this replica began watching it.
  readonly #seen = new Map<string, number>()

  constructor(options: SplitFormsWatchOptions) {
    this.#options = options
  }

  /** One pass over the registry's entries (called each window by the sweeper). */
  async check(entries: readonly RegistryEntry[]): Promise<void> {
    const { forms, now } = this.#options
    const split = entries.filter((entry) => entry.source === 'auto' && entry.mitigation === 'split')
    const watched = new Set(split.map((entry) => entry.key))
    for (const key of [...this.#seen.keys()]) if (!watched.has(key)) this.#seen.delete(key)
    const at = now()
    await Promise.all(
      split.map(async (entry) => {
        const known = this.#seen.get(entry.key)
        const recent = await forms.seen(entry.key, at, known === undefined ? undefined : WINDOWS_PER_CHECK)
        const seen = (known ?? 0) | recent
        this.#seen.set(entry.key, seen)
        if (seen !== 0 && splitKindOf(seen) === undefined) await this.#demote(entry, seen)
      }),
    )
  }

  async #demote(entry: RegistryEntry, seen: number): Promise<void> {
    const { registry, detector, replicaId, log } = this.#options
    const names = formNames(seen).join(', ')
    const demoted = await registry.demote(entry.key, {
      actor: replicaId,
      reason: `split no more: commands seen (${names}) are not one split kind's`,
      onlySource: 'auto',
      log,
    })
    this.#seen.delete(entry.key)
    detector.forget(entry.key)
    if (demoted) log.info({ key: entry.key, forms: names }, 'split key demoted for a foreign command')
  }
}
