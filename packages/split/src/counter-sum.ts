import { NotAnIntegerError } from './errors.js'
import type { GateState } from './gate.js'
import type { JournalEntry } from './journal.js'

const INTEGER = /^-?\d+$/

/** What one read of a split counter saw. */
export interface CounterView {
  readonly base: string | null
  readonly journal: ReadonlyMap<string, JournalEntry>
  /** Every shard read, by `<n>:<index>`, the id its journal entries use. */
  readonly shards: Array<{
    readonly id: string
    readonly data: string
    readonly gate: GateState
    readonly value: string | null
  }>
}

/**
 * Sums a view. Shard and base reads may reach different nodes at different moments, so a drain (seal, add to
 * the base key, delete the shard) can fall between them; the journal and the gates say which side each read saw:
 *
 * 1. A journal entry is a move already added to the base key. If the read saw its shard before that drain
 *    finished (an older seq, or the same seq still sealed), the value was counted in the shard too: take it out.
 * 2. A gate recording a finished move whose journal entry the read did not see: the base key was read before
 *    the move was added (entries outlive the gates' records, see journal.ts) and the shard after it was deleted,
 *    so the value was counted nowhere: put it in.
 */
export function sumOf(key: string, view: CounterView): bigint | null {
  let found = view.base !== null
  const total = new ExactSum()
  total.add(key, key, view.base)
  let moves = view.journal.size > 0
  for (const shard of view.shards) {
    if (shard.value !== null) found = true
    total.add(key, shard.data, shard.value)
    if (shard.gate.moved !== undefined) moves = true
  }
  let sum = total.value()
  // The steady state: no drain recorded anywhere, nothing to correct.
  if (!moves) return found ? sum : null
  const gates = new Map<string, GateState>()
  for (const shard of view.shards) gates.set(shard.id, shard.gate)
  for (const [field, entry] of view.journal) {
    const cut = field.lastIndexOf(':')
    const gate = gates.get(field.slice(0, cut))
    if (gate === undefined) continue
    const seq = Number(field.slice(cut + 1))
    if (seq > gate.seq || (seq === gate.seq && gate.state === 'sealed')) sum -= entry.amount
  }
  for (const [id, gate] of gates) {
    if (gate.moved !== undefined && !view.journal.has(`${id}:${gate.moved.seq}`)) sum += gate.moved.amount
  }
  return found ? sum : null
}

/**
 * A sum of decimal integer replies, exact at any size. Every read of a split counter adds up the base key and
 * each shard; replies of up to 15 digits are added as Numbers while the sum stays a safe integer, because a
 * BigInt made from a string cost more than the rest of the read's own work.
 */
export class ExactSum {
  #small = 0
  #big = 0n

  add(key: string, name: string, value: string | null): void {
    if (value === null) return
    if (!INTEGER.test(value)) throw new NotAnIntegerError(key, name)
    if (value.length <= 15) {
      const next = this.#small + Number(value)
      if (Number.isSafeInteger(next)) {
        this.#small = next
        return
      }
    }
    this.#big += BigInt(value)
  }

  value(): bigint {
    return this.#big + BigInt(this.#small)
  }
}
