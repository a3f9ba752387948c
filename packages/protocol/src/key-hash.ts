import { createHash } from 'node:crypto'
import { z } from 'zod'

/** Length in hex characters of a key hash: 64 bits, enough that distinct hot keys never collide in practice. */
export const KEY_HASH_LENGTH = 16

/**
 * The registry's `key_hash`: the first 16 lowercase hex characters of SHA-256 over the key's UTF-8 bytes.
 * Chosen so any language reproduces it with its standard library, e.g. `sha256(key.encode()).hexdigest()[:16]`.
 */
export function keyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, KEY_HASH_LENGTH)
}

/** A key hash as it appears on the wire. */
export const KeyHash = z.string().regex(/^[0-9a-f]{16}$/, 'expected 16 lowercase hex characters')
