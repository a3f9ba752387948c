import { encodeReply } from '../resp/reply-codec.js'

// A cached reply's bytes, encoded on its first hit and kept while L1 holds the reply (L1 replies are never
// changed; a write replaces them): a hot key's every later hit writes the same Buffer.
const ENCODED = new WeakMap<object, Buffer>()

/** The RESP2 bytes of a reply L1 holds, encoded once per reply object. */
export function cachedReplyBytes(reply: unknown): Buffer {
  if (reply === null || typeof reply !== 'object') return encodeOnce(reply)
  let bytes = ENCODED.get(reply)
  if (bytes === undefined) {
    bytes = encodeOnce(reply)
    ENCODED.set(reply, bytes)
  }
  return bytes
}

/**
 * A reply's RESP2 bytes in one buffer: one small write instead of a writev of three parts. Large values keep
 * their own buffer.
 */
export function encodeOnce(reply: unknown): Buffer {
  if (Buffer.isBuffer(reply) && reply.length < 16_384) {
    const header = `$${reply.length}\r\n`
    const bytes = Buffer.allocUnsafe(header.length + reply.length + 2)
    const at = bytes.write(header, 0, 'latin1')
    reply.copy(bytes, at)
    bytes.write('\r\n', at + reply.length, 'latin1')
    return bytes
  }
  const parts: Buffer[] = []
  encodeReply(reply, parts)
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts)
}
