import type { CommandSpec } from './command-spec.js'
import type { ReplyShape } from './reply-shape.js'

type Decode = (raw: unknown) => unknown

// How ioredis hands each shape to a caller that asked for strings: Buffers decoded as UTF-8 (nested too), and
// HGETALL's pairs made an object (its one reply transformer among the cacheable commands). A Record, so that a new
// shape cannot compile without its decision here.
const IOREDIS_DECODE: Readonly<Record<ReplyShape, Decode>> = {
  bulk: toStrings,
  status: toStrings,
  integer: toStrings,
  bulks: toStrings,
  integers: toStrings,
  position: toStrings,
  pairs: (raw) => {
    const decoded = toStrings(raw)
    return Array.isArray(decoded) ? pairsToObject(decoded) : decoded
  },
  members: toStrings,
  score: toStrings,
  scores: toStrings,
  range: toStrings,
  rank: toStrings,
}

/**
 * A cacheable command's reply as the parser gave it, as ioredis hands it to a caller that asked for strings (not
 * `getBuffer` and the like: ioredis itself decodes those). Computed once per cached reply; callers get it through
 * `freshReply`, because ioredis gives every caller objects of its own.
 */
export function ioredisReply(spec: CommandSpec, raw: unknown): unknown {
  return spec.reply === undefined ? toStrings(raw) : IOREDIS_DECODE[spec.reply](raw)
}

/** A value of the caller's own: strings and numbers are immutable and shared, arrays and objects copied. */
export function freshReply(decoded: unknown): unknown {
  // Kept apart from the copying, which recurses: V8 inlines this test into an L1 hit, where most replies are strings.
  return decoded === null || typeof decoded !== 'object' ? decoded : copied(decoded)
}

function copied(decoded: object): object {
  if (!Array.isArray(decoded)) return { ...decoded }
  // One copy of the array whole; only nested arrays and objects (rare: most cached replies are flat) copied again.
  const copy = decoded.slice()
  for (let i = 0; i < copy.length; i++) {
    const item = copy[i]
    if (item !== null && typeof item === 'object') copy[i] = copied(item)
  }
  return copy
}

function toStrings(raw: unknown): unknown {
  if (Buffer.isBuffer(raw)) return raw.toString()
  if (Array.isArray(raw)) return raw.map(toStrings)
  return raw
}

// As ioredis's transformer: a field named like an Object.prototype property becomes an own property.
function pairsToObject(pairs: unknown[]): Record<string, unknown> {
  const object: Record<string, unknown> = {}
  let strings = true
  for (let i = 0; i < pairs.length; i += 2) {
    const field = String(pairs[i])
    const value = pairs[i + 1]
    if (typeof value !== 'string') strings = false
    if (field in object) {
      Object.defineProperty(object, field, { value, configurable: true, enumerable: true, writable: true })
    } else object[field] = value
  }
  return strings ? withHiddenClass(object) : object
}

// Fields set by name from data leave an object of more than a dozen in V8's dictionary mode, which `{ ...object }`
// copies property by property on every hit (a 20-field hash: most of the hit's cost); JSON.parse builds the same
// own properties, in the same order (`__proto__` included, as an own property), on a hidden class, which a spread
// copies whole. For string values only, which JSON carries exactly (lone surrogates as escapes).
function withHiddenClass(object: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(object)) as Record<string, unknown>
}
