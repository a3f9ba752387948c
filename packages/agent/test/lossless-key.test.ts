import { describe, expect, it } from 'vitest'
import { lossless } from '../src/l1/lossless-key.js'

// What lossless must answer: whether decoding the key's bytes as UTF-8 and encoding them again gives them back.
const roundTrips = (bytes: Buffer) => Buffer.from(bytes.toString()).equals(bytes)

describe('lossless (may L1 cache a Buffer key under its UTF-8 name)', () => {
  it.each([
    ['ASCII', Buffer.from('user:42')],
    ['empty', Buffer.alloc(0)],
    ['two-byte UTF-8', Buffer.from('café')],
    ['four-byte UTF-8 (a surrogate pair)', Buffer.from('key:😀')],
    ['U+FFFD written as UTF-8', Buffer.from('k\ufffd')],
    ['an invalid byte', Buffer.from([0x6b, 0xff])],
    ['invalid bytes as many as the characters of a valid name', Buffer.from([0xff, 0xfe, 0x61])],
    ['a truncated sequence', Buffer.from([0x61, 0xe2, 0x82])],
    ['an overlong encoding', Buffer.from([0xc0, 0xaf])],
  ])('%s', (_, bytes) => {
    expect(lossless(bytes, bytes.toString())).toBe(roundTrips(bytes))
  })

  it('agrees with encoding again on random bytes', () => {
    let seed = 7
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      return seed >>> 16
    }
    for (let i = 0; i < 5000; i++) {
      // Mostly ASCII with a few high bytes, so both answers come up often.
      const bytes = Buffer.from(
        Array.from({ length: 1 + (next() % 12) }, () => (next() % 8 === 0 ? next() & 0xff : next() & 0x7f)),
      )
      expect(lossless(bytes, bytes.toString())).toBe(roundTrips(bytes))
    }
  })

  it('takes strings as they are', () => {
    expect(lossless('\ufffd', '\ufffd')).toBe(true)
  })
})
