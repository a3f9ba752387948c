import { keyHash } from '@heatsink/protocol'
import { describe, expect, it } from 'vitest'
import { decodeRawKey, encodeRawKey, readableRawKey } from '../src/registry/raw-key.js'
import { AWKWARD_KEYS } from './support/awkward-keys.js'

describe('raw key encoding', () => {
  it.each(AWKWARD_KEYS)('round-trips a key with %s', (_, key) => {
    const bytes = encodeRawKey(key)
    expect(decodeRawKey(bytes)).toBe(key)
    // PGlite returns a Uint8Array that may be a view into a larger buffer.
    const view = new Uint8Array(bytes.length + 4).subarray(2, 2 + bytes.length)
    view.set(bytes)
    expect(decodeRawKey(view)).toBe(key)
  })

  it('stores a well-formed key as its UTF-8 bytes, the bytes Redis holds and the key hash covers', () => {
    for (const key of ['a\0b', 'post:🔥:1', 'x\ufffd', 'ключ']) {
      expect(encodeRawKey(key).equals(Buffer.from(key, 'utf8'))).toBe(true)
    }
    expect(keyHash('a\0b')).not.toBe(keyHash('ab'))
  })

  it('stores a lone surrogate in its three-byte WTF-8 form, not as U+FFFD', () => {
    expect([...encodeRawKey('a\ud800')]).toEqual([0x61, 0xed, 0xa0, 0x80])
    expect([...encodeRawKey('\udfff')]).toEqual([0xed, 0xbf, 0xbf])
    expect(decodeRawKey(Buffer.from([0xef, 0xbf, 0xbd]))).toBe('\ufffd')
  })

  it('keeps a readable copy only when text can hold the key', () => {
    expect(readableRawKey('post:🔥:1')).toBe('post:🔥:1')
    expect(readableRawKey('a\0b')).toBeNull()
  })
})
