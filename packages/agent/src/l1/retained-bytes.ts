// What V8 spends on an object beyond its contents (header, map, a Map or array slot): an estimate, so that L1's
// byte bound also holds for many small entries.
export const OBJECT_OVERHEAD_BYTES = 64
// Nested replies deeper than this are counted as one object each: a reply is Redis's, and Redis nests few levels.
const MAX_DEPTH = 8

/**
 * The reply with every Buffer that is a view of a larger allocation (a slice of the socket chunk the parser read,
 * which a proxy's backend connection fills with dozens of replies) copied into memory of its own, so that an L1
 * entry keeps alive only its own bytes. Arrays are copied only when something in them was.
 */
export function ownedReply(reply: unknown, depth = 0): unknown {
  if (Buffer.isBuffer(reply)) {
    if (reply.byteLength === reply.buffer.byteLength) return reply
    const own = Buffer.allocUnsafeSlow(reply.byteLength)
    reply.copy(own)
    return own
  }
  if (!Array.isArray(reply) || depth >= MAX_DEPTH) return reply
  let copy: unknown[] | undefined
  for (let i = 0; i < reply.length; i++) {
    const item = reply[i]
    const owned = ownedReply(item, depth + 1)
    if (owned !== item) {
      copy ??= reply.slice()
      copy[i] = owned
    }
  }
  return copy ?? reply
}

/**
 * Roughly the bytes a reply or value keeps alive: a Buffer's or string's length (a string counted at two bytes a
 * character, V8's wider form, since which form it has cannot be seen), arrays and objects summed over what they
 * hold. An estimate for L1's byte bound, not an accounting: it errs on the high side.
 */
export function retainedBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return OBJECT_OVERHEAD_BYTES + 2 * value.length
  if (value === null || typeof value !== 'object') return 16
  if (Buffer.isBuffer(value)) return OBJECT_OVERHEAD_BYTES + value.length
  if (depth >= MAX_DEPTH) return OBJECT_OVERHEAD_BYTES
  if (Array.isArray(value)) {
    let bytes = OBJECT_OVERHEAD_BYTES
    for (let i = 0; i < value.length; i++) bytes += 8 + retainedBytes(value[i], depth + 1)
    return bytes
  }
  if (value instanceof Error) return OBJECT_OVERHEAD_BYTES + 2 * value.message.length
  let bytes = OBJECT_OVERHEAD_BYTES
  for (const key in value) {
    bytes += 8 + 2 * key.length + retainedBytes((value as Record<string, unknown>)[key], depth + 1)
  }
  return bytes
}
