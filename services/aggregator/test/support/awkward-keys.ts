/** Keys Redis and the protocol accept that Postgres text does not hold as they are. */
export const AWKWARD_KEYS: ReadonlyArray<readonly [string, string]> = [
  ['a NUL byte', 'a\0b'],
  ['only a NUL byte', '\0'],
  ['NUL and other control characters', '\0k\x01\x7f\n\0'],
  ['an emoji', 'post:🔥:1'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate at the end', 'z\udfff'],
  ['U+FFFD itself', 'x\ufffd'],
  ['1024 bytes with a NUL', `${'k'.repeat(1021)}\0é`],
]

/** Whether a key can travel in a URL path: a lone surrogate has no UTF-8 form to percent-encode. */
export function fitsInUrl(key: string): boolean {
  return !/[\uD800-\uDFFF]/u.test(key)
}
