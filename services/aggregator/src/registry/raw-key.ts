// How a raw key is stored in `raw_key_bytes` (migrations/0002_raw_key_bytes.sql). Postgres text cannot hold NUL,
// so keys go to bytea: UTF-8, which for every well-formed key is exactly the bytes Redis stores. A lone
// surrogate has no UTF-8 form (Buffer would turn it into U+FFFD, a different string with the same key hash);
// it is written in its generalized UTF-8 (WTF-8) form, ED A0-BF xx, which no valid UTF-8 contains, so decoding
// gives back the very string that was stored.

/** The bytes stored for `key`. */
export function encodeRawKey(key: string): Buffer {
  // With the u flag the class matches only surrogates that are not half of a pair.
  if (!/[\uD800-\uDFFF]/u.test(key)) return Buffer.from(key, 'utf8')
  const parts: Buffer[] = []
  for (const char of key) {
    const unit = char.charCodeAt(0)
    const lone = char.length === 1 && unit >= 0xd800 && unit <= 0xdfff
    parts.push(
      lone
        ? Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)])
        : Buffer.from(char, 'utf8'),
    )
  }
  return Buffer.concat(parts)
}

/** The key stored as `bytes` (pg returns a Buffer, PGlite a Uint8Array). */
export function decodeRawKey(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let text = ''
  let from = 0
  for (let i = 0; i + 2 < buffer.length; i++) {
    // ED followed by A0-BF is a surrogate's three bytes; everything between them is UTF-8.
    if (buffer[i] !== 0xed || (buffer[i + 1] as number) < 0xa0) continue
    text += buffer.toString('utf8', from, i)
    text += String.fromCharCode(
      0xd000 | (((buffer[i + 1] as number) & 0x3f) << 6) | ((buffer[i + 2] as number) & 0x3f),
    )
    from = i + 3
    i += 2
  }
  return text + buffer.toString('utf8', from)
}

/** The readable copy kept in `raw_key` for operators: the key itself, or null when text cannot hold it (NUL). */
export function readableRawKey(key: string): string | null {
  return key.includes('\0') ? null : key
}
