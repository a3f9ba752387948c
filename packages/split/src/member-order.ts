/** A sorted-set entry as Redis returns it, with its score parsed once for ordering. */
export interface ScoredMember {
  readonly member: string
  /** The score exactly as Redis printed it ('1.5', 'inf', '-inf'), returned to callers unchanged. */
  readonly score: string
  readonly value: number
}

/** Parses a score as Redis prints it. */
export function parseScore(score: string): number {
  if (score === 'inf' || score === '+inf') return Number.POSITIVE_INFINITY
  if (score === '-inf') return Number.NEGATIVE_INFINITY
  return Number(score)
}

/**
 * Orders member names as Redis does for equal scores: by their UTF-8 bytes, which is code point order. JavaScript's
 * `<` compares UTF-16 code units, which differs only between a surrogate (U+D800..DFFF) and U+E000..FFFF; the
 * first differing unit is shifted so that surrogates sort last, as their code points do.
 */
export function compareMembers(a: string, b: string): number {
  if (a === b) return 0
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return fixUp(x) - fixUp(y)
  }
  return a.length - b.length
}

function fixUp(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800
  if (unit >= 0xd800) return unit + 0x2000
  return unit
}

/** Redis' order of a sorted set: by score, then member; `reverse` is ZREVRANGE's order (both descending). */
export function compareScored(a: ScoredMember, b: ScoredMember, reverse: boolean): number {
  const order = a.value < b.value ? -1 : a.value > b.value ? 1 : compareMembers(a.member, b.member)
  return reverse ? -order : order
}

/** Pairs a WITHSCORES reply ([member, score, member, score, ...]). */
export function pairScores(reply: readonly string[]): ScoredMember[] {
  const entries: ScoredMember[] = []
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const score = reply[i + 1]!
    entries.push({ member: reply[i]!, score, value: parseScore(score) })
  }
  return entries
}
