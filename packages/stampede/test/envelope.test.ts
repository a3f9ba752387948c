import { describe, expect, it } from 'vitest'
import {
  decodeEnvelope,
  encodeEnvelope,
  Generations,
  shouldRefreshEarly,
  unwrapStored,
} from '../src/index.js'

describe('envelope', () => {
  it('round-trips the header and leaves the payload untouched', () => {
    const payload = JSON.stringify({ text: 'line one\nline two', n: 1 })
    const text = encodeEnvelope({ expiresAt: 1_700_000_010_000, deltaMs: 812, kind: 'v', payload })
    expect(text.split('\n', 1)[0]).toBe('\u001ehs1 1700000010000 812 v')
    expect(decodeEnvelope(text)).toEqual({ expiresAt: 1_700_000_010_000, deltaMs: 812, kind: 'v', payload })
  })

  it('does not read plain values, or damaged headers, as envelopes', () => {
    expect(decodeEnvelope('{"a":1}')).toBeUndefined()
    expect(decodeEnvelope('\u001ehs1 12 x v\n{}')).toBeUndefined()
    expect(decodeEnvelope('\u001ehs1 12 3 q\n{}')).toBeUndefined()
    expect(decodeEnvelope('\u001ehs1 12 3 v')).toBeUndefined()
  })

  it('unwraps stored text for plain reads: payload, null for "not found", other text unchanged', () => {
    expect(unwrapStored(encodeEnvelope({ expiresAt: 1, deltaMs: 0, kind: 'v', payload: '"x"' }))).toBe('"x"')
    expect(unwrapStored(encodeEnvelope({ expiresAt: 1, deltaMs: 0, kind: 'u', payload: '' }))).toBeNull()
    expect(unwrapStored('plain')).toBe('plain')
    expect(unwrapStored(null)).toBeNull()
  })
})

describe('XFetch draw', () => {
  const expiry = 10_000
  it('never refreshes early with beta 0, always at or after expiry', () => {
    expect(shouldRefreshEarly(9_999, expiry, 500, 0, () => 1e-9)).toBe(false)
    expect(shouldRefreshEarly(10_000, expiry, 500, 0, () => 0.5)).toBe(true)
  })

  it('refreshes when now - delta * beta * ln(u) reaches expiry', () => {
    // ln(0.5) = -0.693: with delta 1,000 the draw reaches 693 ms ahead.
    expect(shouldRefreshEarly(9_310, expiry, 1_000, 1, () => 0.5)).toBe(true)
    expect(shouldRefreshEarly(9_300, expiry, 1_000, 1, () => 0.5)).toBe(false)
    // beta 2 doubles the reach.
    expect(shouldRefreshEarly(8_700, expiry, 1_000, 2, () => 0.5)).toBe(true)
    // u = 0 would be ln(0) = -Infinity; it is read as the smallest u instead, a certain refresh.
    expect(shouldRefreshEarly(0, expiry, 1_000, 1, () => 0)).toBe(true)
  })
})

describe('generations', () => {
  it('makes tickets taken before a bump stale for that key only', () => {
    const generations = new Generations()
    const before = generations.ticket()
    generations.bump('a')
    expect(generations.isCurrent('a', before)).toBe(false)
    expect(generations.isCurrent('b', before)).toBe(true)
    const after = generations.ticket()
    generations.bump('b')
    expect(generations.isCurrent('a', after)).toBe(true)
    expect(generations.isCurrent('b', after)).toBe(false)
  })

  it('stays bounded: past its table size every older ticket is stale, newer ones are current', () => {
    const generations = new Generations()
    const old = generations.ticket()
    for (let i = 0; i <= 100_000; i++) generations.bump(`k${i}`)
    expect(generations.isCurrent('never-bumped', old)).toBe(false)
    const fresh = generations.ticket()
    expect(generations.isCurrent('never-bumped', fresh)).toBe(true)
    expect(generations.isCurrent('k5', fresh)).toBe(true)
  })
})
