import { describe, expect, it } from 'vitest'
import {
  canonicalJson,
  decodeRegistryEvent,
  decodeSnapshot,
  encodeRegistryEvent,
  encodeSnapshot,
  registryKeyProblem,
  signRegistryMessage,
  verifyRegistryMessage,
  WIRE_VERSION,
} from '../src/index.js'
import { entry } from './fixtures.js'

const KEY = 'k'.repeat(32)
const OTHER_KEY = 'o'.repeat(32)
const event = encodeRegistryEvent({
  v: WIRE_VERSION,
  kind: 'registry',
  type: 'promote',
  version: 3,
  at: 1_700_000_000_500,
  entry: entry(),
})
const snapshot = encodeSnapshot({ v: WIRE_VERSION, kind: 'snapshot', version: 3, at: 1, entries: [entry()] })

describe('registry message MACs', () => {
  it('a signed event and snapshot verify with the key and decode with the mac kept', () => {
    const signedEvent = signRegistryMessage(event, KEY)
    const signedSnapshot = signRegistryMessage(snapshot, KEY)
    expect(verifyRegistryMessage(signedEvent, KEY)).toBe(true)
    expect(verifyRegistryMessage(signedSnapshot, KEY)).toBe(true)
    expect(decodeRegistryEvent(signedEvent).mac).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(decodeSnapshot(signedSnapshot).mac).toBeDefined()
  })

  it('an unsigned message, another key, a changed field or a replaced mac do not verify', () => {
    const signed = signRegistryMessage(event, KEY)
    expect(verifyRegistryMessage(event, KEY)).toBe(false)
    expect(verifyRegistryMessage(signed, OTHER_KEY)).toBe(false)
    const parsed = JSON.parse(signed)
    expect(verifyRegistryMessage(JSON.stringify({ ...parsed, version: 4 }), KEY)).toBe(false)
    expect(verifyRegistryMessage(JSON.stringify({ ...parsed, mac: 'x' }), KEY)).toBe(false)
    expect(verifyRegistryMessage('not json', KEY)).toBe(false)
    // An event's MAC does not make a snapshot: `kind` is under the MAC.
    expect(verifyRegistryMessage(JSON.stringify({ ...parsed, kind: 'snapshot' }), KEY)).toBe(false)
  })

  it('field order does not matter: the MAC is over a canonical encoding', () => {
    const signed = JSON.parse(signRegistryMessage(event, KEY)) as Record<string, unknown>
    const reordered = Object.fromEntries(Object.entries(signed).reverse())
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(signed))
    expect(verifyRegistryMessage(JSON.stringify(reordered), KEY)).toBe(true)
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: true })).toBe(
      '{"a":true,"b":[1,{"c":"x","d":null}]}',
    )
  })

  it('re-signing replaces the old mac', () => {
    const twice = signRegistryMessage(signRegistryMessage(event, OTHER_KEY), KEY)
    expect(verifyRegistryMessage(twice, KEY)).toBe(true)
  })

  it('decoders without a key accept signed messages, so unsigned and signed fleets interoperate', () => {
    expect(decodeRegistryEvent(event).mac).toBeUndefined()
    expect(decodeRegistryEvent(signRegistryMessage(event, KEY)).version).toBe(3)
  })

  it('keys must be at least 32 printable ASCII characters', () => {
    expect(registryKeyProblem(KEY)).toBeUndefined()
    expect(registryKeyProblem('short')).toBe('expected at least 32 characters, got 5')
    expect(registryKeyProblem(`${KEY} x`)).toBe('expected printable ASCII without spaces')
    expect(registryKeyProblem(42)).toBe('expected a string, got number')
  })
})
