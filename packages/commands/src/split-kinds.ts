import { CommandForm, FORM_NAMES, KNOWN_FORMS } from './command-forms.js'

/**
 * What a split key holds: each kind answers its own command forms over its shards and nothing else. Only
 * counters: the data plane folds a split set, sorted set or read-mostly copy back into its base key on its first
 * command (SADD's and ZADD's counts and SMEMBERS' order cannot match the unsplit key's, and a copy can show a
 * value and then an older one; see "What the data plane serves" in docs/architecture.md), so splitting one would
 * only cost a fold.
 */
export type SplitKind = 'counter'

/**
 * The forms each split kind answers faithfully, and the form a key's traffic must include to be that kind. A key
 * may be split automatically only when every form seen on it lies within one kind's forms.
 */
const SPLIT_KINDS: ReadonlyArray<readonly [kind: SplitKind, forms: number, required: number]> = [
  // A counter is written by the INCR family and read by GET.
  ['counter', CommandForm.counterWrite | CommandForm.get, CommandForm.counterWrite],
]

/** The one split kind whose forms hold every form in `forms`, or undefined (nothing seen, or forms foreign to all). */
export function splitKindOf(forms: number): SplitKind | undefined {
  if (forms === 0) return undefined
  for (const [kind, allowed, required] of SPLIT_KINDS) {
    if ((forms & ~allowed) === 0 && (forms & required) === required) return kind
  }
  return undefined
}

/** A reported mask with the bits this table does not know turned into `other`. */
export function knownForms(forms: number): number {
  return (forms & ~KNOWN_FORMS) === 0 ? forms : (forms & KNOWN_FORMS) | CommandForm.other
}

/** The names of the forms in a mask, in bit order (unknown bits read as `other`). */
export function formNames(forms: number): string[] {
  const known = knownForms(forms)
  return FORM_NAMES.filter(([, bit]) => (known & bit) !== 0).map(([name]) => name)
}
