/** Number of hash slots in a Redis Cluster. */
export const CLUSTER_SLOTS = 16384

// CRC16/XMODEM (poly 0x1021, init 0, no reflection), the variant Redis Cluster uses; a table makes it
// one lookup per byte.
const TABLE = new Uint16Array(256)
for (let i = 0; i < 256; i++) {
  let crc = i << 8
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  TABLE[i] = crc
}

const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d

/**
 * The Redis Cluster hash slot of a key name, honouring `{hash tags}` exactly as Redis does: only the part
 * between the first `{` and the first `}` after it is hashed, unless that part is empty (`{}`), in which
 * case the whole key is hashed. A string is hashed as the UTF-8 bytes ioredis sends for it.
 *
 * Kept by hand rather than taken from cluster-key-slot (ioredis' own) because it is right where that library is
 * not, checked against Redis in test/cluster-slot-random.test.ts: cluster-key-slot 1.1.x hashes `foo{}{bar}` as
 * `{bar` (slot 4015) where Redis hashes the whole key (8363), and encodes a lone UTF-16 surrogate as three bytes of
 * its own where ioredis writes U+FFFD. It is also faster on every key shape measured, strings and Buffers
 * (packages/bench `cluster-slot`; the figures are in docs/performance.md).
 */
export function redisClusterSlot(key: string | Uint8Array): number {
  return typeof key === 'string' ? stringSlot(key) : bytesSlot(key)
}

// One pass for the usual key: the whole key's CRC runs while looking for `{`, so a key without one is read once;
// a tag is hashed on its own, and only an empty or unclosed one sends the whole-key CRC on from where it paused.
// Scanning in JavaScript rather than with indexOf because, for keys of a few dozen bytes, the native call costs
// more than the loop.
function bytesSlot(bytes: Uint8Array): number {
  const length = bytes.length
  let crc = 0
  let i = 0
  for (; i < length && bytes[i] !== OPEN_BRACE; i++) crc = crcStep(crc, bytes[i]!)
  if (i === length) return crc % CLUSTER_SLOTS
  let tag = 0
  for (let j = i + 1; j < length; j++) {
    const byte = bytes[j]!
    if (byte === CLOSE_BRACE) {
      if (j > i + 1) return tag % CLUSTER_SLOTS
      break
    }
    tag = crcStep(tag, byte)
  }
  for (; i < length; i++) crc = crcStep(crc, bytes[i]!)
  return crc % CLUSTER_SLOTS
}

// The same pass over the characters while they are ASCII, so a string key costs no UTF-8 copy. Braces are ASCII
// and every byte of a longer UTF-8 sequence is 0x80 or above, so up to the first non-ASCII character the
// characters are the bytes; from there the key is encoded as ioredis writes it (a lone surrogate as U+FFFD).
function stringSlot(key: string): number {
  const length = key.length
  let crc = 0
  let i = 0
  for (; i < length; i++) {
    const unit = key.charCodeAt(i)
    if (unit === OPEN_BRACE) break
    if (unit >= 0x80) return bytesSlot(Buffer.from(key, 'utf8'))
    crc = crcStep(crc, unit)
  }
  if (i === length) return crc % CLUSTER_SLOTS
  let tag = 0
  for (let j = i + 1; j < length; j++) {
    const unit = key.charCodeAt(j)
    if (unit === CLOSE_BRACE) {
      if (j > i + 1) return tag % CLUSTER_SLOTS
      break
    }
    if (unit >= 0x80) return bytesSlot(Buffer.from(key, 'utf8'))
    tag = crcStep(tag, unit)
  }
  for (; i < length; i++) {
    const unit = key.charCodeAt(i)
    if (unit >= 0x80) return bytesSlot(Buffer.from(key, 'utf8'))
    crc = crcStep(crc, unit)
  }
  return crc % CLUSTER_SLOTS
}

/** One byte of CRC16/XMODEM. */
function crcStep(crc: number, byte: number): number {
  return ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!
}
