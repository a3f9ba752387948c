/**
 * A parser reply as ioredis hands it to a caller that asked for strings: Buffers decoded as UTF-8, and HGETALL's
 * pairs made an object (ioredis's one reply transformer for the cacheable commands). Computed once per cached
 * reply; callers get it through `fresh`, because ioredis gives every caller objects of its own.
 */
export function decodeReply(command: string, raw: unknown): unknown {
  const decoded = toStrings(raw)
  return command === 'hgetall' && Array.isArray(decoded) ? pairsToObject(decoded) : decoded
}

/** A value of the caller's own: strings and numbers are immutable and shared, arrays and objects copied. */
export function fresh(decoded: unknown): unknown {
  if (decoded === null || typeof decoded !== 'object') return decoded
  if (!Array.isArray(decoded)) return { ...decoded }
  // One copy of the array whole; only nested arrays and objects (rare: most cached replies are flat) copied again.
  const copy = decoded.slice()
  for (let i = 0; i < copy.length; i++) {
    const item = copy[i]
    if (item !== null && typeof item === 'object') copy[i] = fresh(item)
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
