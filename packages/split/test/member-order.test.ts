import { describe, expect, it } from 'vitest'
import { compareMembers } from '../src/member-order.js'
import { below, seeded } from './support/random.js'

describe('member order', () => {
  it('orders like the UTF-8 bytes Redis compares', () => {
    const random = seeded(5)
    const alphabet = [
      'a',
      'b',
      'Z',
      '0',
      'é',
      'ß',
      '中',
      '\uFF21',
      '\uE000',
      '\u{1F600}',
      '\u{10FFFF}',
      ' ',
      '',
    ]
    const words = Array.from({ length: 400 }, () =>
      Array.from({ length: below(random, 4) }, () => alphabet[below(random, alphabet.length)]).join(''),
    )
    const bytes = [...words].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    expect([...words].sort(compareMembers)).toEqual(bytes)
  })
})
