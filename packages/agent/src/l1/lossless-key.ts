/** True when `key` is `name` exactly (a string, or a Buffer holding UTF-8), so L1 may cache it by `name`. */
export function lossless(key: unknown, name: string): boolean {
  if (!Buffer.isBuffer(key)) return true
  // UTF-8 decoding never makes more UTF-16 units than bytes, and makes as many only when every byte became one
  // unit: ASCII, or an invalid byte turned into U+FFFD. So equal lengths and no U+FFFD mean ASCII, which
  // round-trips: the common key is settled without encoding the name again.
  if (name.length === key.length && name.indexOf('\ufffd') === -1) return true
  return Buffer.from(name).equals(key)
}
