// Arguments arrive as ioredis and a RESP parser hand them over: strings, Buffers (or any Uint8Array) and
// numbers. These helpers read an argument the way Redis does without converting the ones they only compare.

const decoder = new TextDecoder()
const LOWER_A = 0x61
const LOWER_Z = 0x7a
const CASE_BIT = 0x20
// Redis parses counts strictly: no sign, no spaces, no hex, which Number() would all accept.
const DIGITS = /^[0-9]+$/

/**
 * Whether `arg` is the option `token` (given in uppercase ASCII), compared case-insensitively as Redis
 * compares option names. A number is never an option.
 */
export function isToken(arg: unknown, token: string): boolean {
  if (typeof arg === 'string') return arg.length === token.length && arg.toUpperCase() === token
  if (!(arg instanceof Uint8Array) || arg.length !== token.length) return false
  for (let i = 0; i < arg.length; i += 1) {
    let byte = arg[i]!
    if (byte >= LOWER_A && byte <= LOWER_Z) byte -= CASE_BIT
    if (byte !== token.charCodeAt(i)) return false
  }
  return true
}

/** Whether `arg` is one of `tokens` (uppercase ASCII); see isToken. */
export function isAnyToken(arg: unknown, tokens: readonly string[]): boolean {
  for (const token of tokens) if (isToken(arg, token)) return true
  return false
}

/** Whether `arg` is the empty string, as MIGRATE's key argument is when the keys follow KEYS. */
export function isEmptyArg(arg: unknown): boolean {
  return arg === '' || (arg instanceof Uint8Array && arg.length === 0)
}

/**
 * The positive integer `arg` spells in decimal digits (a numkeys argument), or 0 when it spells none: Redis
 * rejects such a call, so it names no keys.
 */
export function countArg(arg: unknown): number {
  if (typeof arg === 'number') return Number.isSafeInteger(arg) && arg > 0 ? arg : 0
  const text = typeof arg === 'string' ? arg : arg instanceof Uint8Array ? decoder.decode(arg) : ''
  if (!DIGITS.test(text)) return 0
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : 0
}

/** The indexes `from`, `from + 1`, ... of `count` arguments, cut short where args end. */
export function runOfIndexes(from: number, count: number, length: number): number[] {
  const end = Math.min(from + count, length)
  const indexes: number[] = []
  for (let i = from; i < end; i += 1) indexes.push(i)
  return indexes
}
