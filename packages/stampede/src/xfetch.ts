/**
 * XFetch (Vattani, Chierichetti, Lowenstein, "Optimal Probabilistic Cache Stampede Prevention", VLDB 2015):
 * refresh early when `now - delta * beta * ln(u) >= expiry`, u uniform in (0, 1]. The chance rises toward
 * expiry and with the load's duration `delta`; beta > 1 refreshes earlier, 0 never early.
 */
export function shouldRefreshEarly(
  now: number,
  expiresAt: number,
  deltaMs: number,
  beta: number,
  random: () => number,
): boolean {
  if (beta === 0 || deltaMs <= 0) return now >= expiresAt
  // random() may return 0, and ln(0) is -Infinity: read it as the smallest positive u instead.
  const u = random() || Number.MIN_VALUE
  return now - deltaMs * beta * Math.log(u) >= expiresAt
}
