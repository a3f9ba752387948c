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

/** CRC16/XMODEM of `bytes[start, end)`. */
function crc16(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ bytes[i]!) & 0xff]!
  return crc
}

/**
 * The Redis Cluster hash slot of a key name, honouring `{hash tags}` exactly as Redis does: only the part
 * between the first `{` and the first `}` after it is hashed, unless that part is empty (`{}`), in which
 * case the whole key is hashed.
 */
export function redisClusterSlot(name: string): number {
  // Redis hashes bytes, so the key is hashed as UTF-8; braces are ASCII and so safe to find bytewise.
  const bytes = Buffer.from(name, 'utf8')
  const open = bytes.indexOf(OPEN_BRACE)
  if (open !== -1) {
    const close = bytes.indexOf(CLOSE_BRACE, open + 1)
    if (close > open + 1) return crc16(bytes, open + 1, close) % CLUSTER_SLOTS
  }
  return crc16(bytes, 0, bytes.length) % CLUSTER_SLOTS
}
