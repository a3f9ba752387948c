import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { KeyHash, keyHash } from '../src/index.js'

describe('keyHash', () => {
  it('matches the known vector', () => {
    // sha256('product:12345') = 14c929682a4c2793...
    expect(keyHash('product:12345')).toBe('14c929682a4c2793')
  })

  it('hashes UTF-8 bytes', () => {
    expect(keyHash('€')).toBe(
      createHash('sha256')
        .update(Buffer.from([0xe2, 0x82, 0xac]))
        .digest('hex')
        .slice(0, 16),
    )
  })

  it('gives distinct keys distinct hashes, and passes its own schema', () => {
    expect(keyHash('a')).not.toBe(keyHash('b'))
    expect(KeyHash.safeParse(keyHash('anything')).success).toBe(true)
    expect(KeyHash.safeParse('14C929682A4C2793').success).toBe(false)
    expect(KeyHash.safeParse('14c929682a4c279').success).toBe(false)
  })
})
