/**
 * How many times the L1 rules let one process read a hot key from Redis while it is read without pause, worked
 * out from the rules in packages/agent/src/l1 (gated-cache.ts, reply-cache.ts) rather than measured:
 *
 * - an entry lives ttlFraction of the key's remaining PTTL at the first fill since its last invalidation, capped
 *   at maxTtlMs (a key without TTL, or absent, gets the cap); a refill with no invalidation in between keeps that
 *   lifetime, cut to what is left of the key's TTL;
 * - an entry read since it was stored is refilled a lead before it expires (a tenth of its lifetime, at most
 *   50 ms: l1/refresh-ahead.ts), unless its key's TTL cut its lifetime (then the key's expiry ends it);
 * - reads of a missing entry share one fill (so the count does not depend on how many readers there are);
 * - a write to the key (here: the writer's, or its expiry) invalidates the entry, and the next read refills.
 *
 * Fills are taken as instant: a real fill's round trip only delays the next lifetime's start, so the real count
 * can only be lower, except for a fill that a write voids in flight (counted here as the fill before the write).
 */
export interface RefillRules {
  ttlFraction: number
  maxTtlMs: number
}

/** What happened to the key while it was read: when it was written (ms, one clock) and with which TTL. */
export interface KeyHistory {
  /** Each write's time; the key holds a value from the first one on. */
  writes: readonly number[]
  /** The TTL every write set, or undefined for none. */
  ttlMs: number | undefined
}

/** Redis reads of the key the rules allow one process that reads it from `from` until `to`. */
export function allowedRefills(rules: RefillRules, history: KeyHistory, from: number, to: number): number {
  const { writes, ttlMs } = history
  let fills = 0
  let firstLifetime: number | undefined
  let lastWrite = -1
  let t = from
  while (t < to) {
    const written = latestAtOrBefore(writes, t)
    // A write, or the key's expiry (Redis reports it to tracking like a write), starts the lifetime anew.
    const expiresAt = ttlMs === undefined || written === undefined ? Infinity : written + ttlMs
    if (written !== lastWrite || t >= expiresAt) firstLifetime = undefined
    lastWrite = written ?? -1
    fills++
    const remaining = t < expiresAt && expiresAt !== Infinity ? expiresAt - t : -1
    firstLifetime ??=
      remaining >= 0 ? Math.min(Math.floor(remaining * rules.ttlFraction), rules.maxTtlMs) : rules.maxTtlMs
    const lifetime = remaining >= 0 ? Math.min(firstLifetime, remaining) : firstLifetime
    // A lifetime under 1 ms is not stored: the next read fills again (at least 1 ms on, a round trip here).
    const cut = remaining >= 0 && lifetime >= remaining
    const entryEnds = t + Math.max(1, cut ? lifetime : refreshedAfter(lifetime))
    const nextWrite = writes.find((at) => at > t) ?? Infinity
    const nextExpiry = expiresAt > t ? expiresAt : Infinity
    t = Math.min(entryEnds, nextWrite, nextExpiry)
  }
  return fills
}

// How long after its fill an entry read without pause is refilled ahead of its expiry.
function refreshedAfter(lifetime: number): number {
  return lifetime < 20 ? lifetime : lifetime - Math.min(Math.floor(lifetime / 10), 50)
}

function latestAtOrBefore(times: readonly number[], t: number): number | undefined {
  let latest: number | undefined
  for (const at of times) if (at <= t) latest = at
  return latest
}
