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
  if (Array.isArray(decoded)) return decoded.map(fresh)
  return { ...decoded }
}

function toStrings(raw: unknown): unknown {
  if (Buffer.isBuffer(raw)) return raw.toString()
  if (Array.isArray(raw)) return raw.map(toStrings)
  return raw
}

// As ioredis's transformer: a field named like an Object.prototype property becomes an own property.
function pairsToObject(pairs: unknown[]): Record<string, unknown> {
  const object: Record<string, unknown> = {}
  for (let i = 0; i < pairs.length; i += 2) {
    const field = String(pairs[i])
    const value = pairs[i + 1]
    if (field in object) {
      Object.defineProperty(object, field, { value, configurable: true, enumerable: true, writable: true })
    } else object[field] = value
  }
  return object
}
