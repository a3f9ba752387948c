// Longer than 300 lines: one codec's round trips and refusals, sharing the fixtures of every message kind at the
// top of the file.
import { describe, expect, it } from 'vitest'
import { ZodError } from 'zod'
import {
  compactCandidate,
  decodeInvalidation,
  decodeRegistryEvent,
  decodeReport,
  decodeSnapshot,
  encodeInvalidation,
  encodeRegistryEvent,
  encodeReport,
  encodeSnapshot,
  type Invalidation,
  MalformedMessageError,
  ProtocolError,
  type RegistryEvent,
  type RegistrySnapshot,
  STREAM_FIELD,
  safeDecodeInvalidation,
  safeDecodeRegistryEvent,
  safeDecodeReport,
  safeDecodeSnapshot,
  WIRE_VERSION,
  WireVersionMismatchError,
} from '../src/index.js'
import { entry, report } from './fixtures.js'

const promote: RegistryEvent = {
  v: 1,
  kind: 'registry',
  type: 'promote',
  version: 3,
  at: 1_700_000_000_500,
  entry: entry(),
}
const update: RegistryEvent = {
  v: 1,
  kind: 'registry',
  type: 'update',
  version: 4,
  at: 1_700_000_001_000,
  entry: {
    ...entry(),
    mitigation: 'local_cache',
    splitFactor: 1,
    ttlSeconds: null,
    expiresAt: null,
    version: 4,
  },
}
const demote: RegistryEvent = {
  v: 1,
  kind: 'registry',
  type: 'demote',
  version: 5,
  at: 1_700_000_002_000,
  key: 'product:12345',
  keyHash: entry().keyHash,
  reason: 'cooled down',
}
const snapshot: RegistrySnapshot = {
  v: 1,
  kind: 'snapshot',
  version: 9,
  at: 1_700_000_003_000,
  entries: [entry('a'), { ...entry('b'), source: 'manual', mitigation: 'coalesce', splitFactor: 1 }],
}
const invalidation: Invalidation = {
  v: 1,
  kind: 'invalidate',
  origin: 'agent-2',
  keys: ['product:1', 'cart:€'],
  at: 1_700_000_004_000,
}

/** The error `fn` throws; fails the test when it does not throw. */
function thrown(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

/** Asserts `fn` throws MalformedMessageError for `field`, and returns it. */
function malformedAt(fn: () => unknown, field: string): MalformedMessageError {
  const error = thrown(fn)
  expect(error).toBeInstanceOf(MalformedMessageError)
  const malformed = error as MalformedMessageError
  expect(malformed.field).toBe(field)
  expect(malformed.code).toBe('E_MALFORMED_MESSAGE')
  expect(malformed.name).toBe('MalformedMessageError')
  expect(malformed).toBeInstanceOf(ProtocolError)
  return malformed
}

/** `value` as JSON with the field at dotted `path` replaced; `undefined` removes it. */
function patched(value: unknown, path: string, replacement: unknown): string {
  const message = JSON.parse(JSON.stringify(value)) as Record<string, unknown>
  const parts = path.split('.')
  let target = message
  for (const part of parts.slice(0, -1)) target = target[part] as Record<string, unknown>
  target[parts.at(-1)!] = replacement
  return JSON.stringify(message)
}

describe('round trips', () => {
  it('carries a report unchanged', () => {
    const r = report(100)
    expect(decodeReport(encodeReport(r))).toEqual(r)
  })

  it('carries every registry event unchanged', () => {
    for (const event of [promote, update, demote])
      expect(decodeRegistryEvent(encodeRegistryEvent(event))).toEqual(event)
  })

  it('carries a snapshot unchanged, empty or not', () => {
    expect(decodeSnapshot(encodeSnapshot(snapshot))).toEqual(snapshot)
    const empty: RegistrySnapshot = { v: 1, kind: 'snapshot', version: 0, at: 0, entries: [] }
    expect(decodeSnapshot(encodeSnapshot(empty))).toEqual(empty)
  })

  it('carries an invalidation unchanged', () => {
    expect(decodeInvalidation(encodeInvalidation(invalidation))).toEqual(invalidation)
  })

  it('fills defaults an encoder left out', () => {
    const text = encodeReport({ ...report(1), hotKeyStats: undefined })
    expect(decodeReport(text).hotKeyStats).toEqual([])
    const sparse = encodeReport({ ...report(1), hotKeyStats: [{ key: 'k', l1Hits: 3 }] })
    expect(decodeReport(sparse).hotKeyStats[0]).toMatchObject({
      key: 'k',
      l1Hits: 3,
      timeouts: 0,
      leaseWaits: 0,
    })
    const { splitFactor: _, ...noFactor } = entry()
    const event = decodeRegistryEvent(encodeRegistryEvent({ ...promote, entry: noFactor }))
    expect(event.type === 'promote' && event.entry.splitFactor).toBe(1)
  })

  it('drops fields this version does not know', () => {
    const decoded = decodeReport(patched(report(1), 'extra', 1))
    expect(decoded).not.toHaveProperty('extra')
  })

  it('names the stream field', () => {
    expect(STREAM_FIELD).toBe('m')
  })
})

describe('safe decoders', () => {
  it('return the value on success', () => {
    expect(safeDecodeReport(encodeReport(report()))).toEqual({ ok: true, value: report() })
    expect(safeDecodeRegistryEvent(encodeRegistryEvent(demote))).toEqual({ ok: true, value: demote })
    expect(safeDecodeSnapshot(encodeSnapshot(snapshot))).toEqual({ ok: true, value: snapshot })
    expect(safeDecodeInvalidation(encodeInvalidation(invalidation))).toEqual({
      ok: true,
      value: invalidation,
    })
  })

  it('return the error instead of throwing', () => {
    for (const decode of [
      safeDecodeReport,
      safeDecodeRegistryEvent,
      safeDecodeSnapshot,
      safeDecodeInvalidation,
    ]) {
      const bad = decode('{')
      expect(bad.ok).toBe(false)
      expect(!bad.ok && bad.error).toBeInstanceOf(MalformedMessageError)
      const future = decode('{"v":2}')
      expect(!future.ok && future.error).toBeInstanceOf(WireVersionMismatchError)
    }
  })
})

describe('wire version', () => {
  it('refuses a message from a newer build before looking at its fields', () => {
    const error = thrown(() => decodeReport(patched({ ...report(), candidates: 'x' }, 'v', 2)))
    expect(error).toBeInstanceOf(WireVersionMismatchError)
    expect(error).toBeInstanceOf(ProtocolError)
    expect(error).toMatchObject({
      code: 'E_WIRE_VERSION',
      name: 'WireVersionMismatchError',
      expected: 1,
      received: 2,
    })
    expect((error as Error).message).toBe(
      'message speaks wire version 2; this build speaks version 1: upgrade agents and aggregators together',
    )
  })

  it('refuses every message kind from another version', () => {
    expect(thrown(() => decodeRegistryEvent(patched(promote, 'v', 0)))).toMatchObject({
      expected: WIRE_VERSION,
      received: 0,
    })
    expect(thrown(() => decodeSnapshot(patched(snapshot, 'v', 3)))).toBeInstanceOf(WireVersionMismatchError)
    expect(thrown(() => decodeInvalidation(patched(invalidation, 'v', 2)))).toBeInstanceOf(
      WireVersionMismatchError,
    )
  })

  it('treats a missing version as malformed', () => {
    const error = malformedAt(() => decodeReport(patched(report(), 'v', undefined)), 'v')
    expect(error.message).toContain('"v"')
    expect(error.message).toContain('missing')
    malformedAt(() => decodeInvalidation(patched(invalidation, 'v', undefined)), 'v')
  })

  it('treats a non-numeric version as malformed', () => {
    malformedAt(() => decodeReport(patched(report(), 'v', '1')), 'v')
    malformedAt(() => decodeSnapshot(patched(snapshot, 'v', null)), 'v')
  })
})

describe('malformed messages', () => {
  it('reports bad JSON with its cause', () => {
    const error = malformedAt(() => decodeReport('{"v":1,'), '(json)')
    expect(error.cause).toBeInstanceOf(SyntaxError)
    malformedAt(() => decodeRegistryEvent(''), '(json)')
  })

  it.each(['42', 'null', '[]', '"report"'])('rejects %s, which is not an object', (text) => {
    malformedAt(() => decodeReport(text), '(root)')
  })

  it('rejects another message kind', () => {
    const error = malformedAt(() => decodeReport(encodeInvalidation(invalidation)), 'kind')
    expect(error.message).toContain('"report"')
    expect(error.message).toContain('"invalidate"')
    malformedAt(() => decodeSnapshot(encodeRegistryEvent(promote)), 'kind')
    malformedAt(() => decodeRegistryEvent(patched(promote, 'kind', undefined)), 'kind')
  })

  it('names the first failing field of a report and keeps the ZodError', () => {
    const error = malformedAt(
      () => decodeReport(patched(report(5), 'candidates.3.count', -1)),
      'candidates.3.count',
    )
    expect(error.message).toContain('candidates.3.count')
    expect(error.message).toMatch(/>=\s*0/)
    expect(error.cause).toBeInstanceOf(ZodError)
  })

  // Each row replaces the field at a path (undefined removes it) and expects that path named as the field.
  it.each<[string, unknown]>([
    ['agentId', undefined],
    ['agentId', 'a'.repeat(129)],
    ['seq', 1.5],
    ['windowStart', '2024-01-01'],
    ['windowMs', 0],
    ['total', -3],
    ['dropped', undefined],
    ['candidates', undefined],
    ['candidates.0.key', '€'.repeat(400)],
    ['candidates.1.key', ''],
    ['candidates.2.writes', null],
    ['hotKeyStats.0.l1Hits', -1],
    ['hotKeyStats.0.splitShardCounts.2', 'x'],
  ])('names %s in a report', (field, replacement) => {
    const error = malformedAt(() => decodeReport(patched(report(), field, replacement)), field)
    expect(error.message).toContain(field)
  })

  it('caps the candidates in a report', () => {
    expect(decodeReport(encodeReport(report(10_000))).candidates).toHaveLength(10_000)
    malformedAt(() => decodeReport(encodeReport(report(10_001))), 'candidates')
  })

  it.each<[string, RegistryEvent, unknown]>([
    ['type', promote, 'evict'],
    ['type', promote, undefined],
    ['version', promote, 0],
    ['at', update, undefined],
    ['entry', promote, undefined],
    ['entry.splitFactor', promote, 3],
    ['entry.mitigation', update, 'shard'],
    ['entry.keyHash', promote, 'nothex'],
    ['entry.ttlSeconds', promote, 0],
    ['entry.source', promote, 'ops'],
    ['entry.status', promote, 'demoted'],
    ['entry.expiresAt', promote, undefined],
    ['entry.version', promote, 0],
    ['reason', demote, undefined],
    ['key', demote, 'k'.repeat(1025)],
    ['keyHash', demote, undefined],
  ])('names %s in a registry event', (field, event, replacement) => {
    const error = malformedAt(() => decodeRegistryEvent(patched(event, field, replacement)), field)
    expect(error.message).toContain(field)
  })

  it.each<[string, unknown]>([
    ['version', -1],
    ['entries', undefined],
    ['entries.1.mitigation', 'none'],
    ['entries.0.splitFactor', 2048],
  ])('names %s in a snapshot', (field, replacement) => {
    malformedAt(() => decodeSnapshot(patched(snapshot, field, replacement)), field)
  })

  it.each<[string, unknown]>([
    ['origin', undefined],
    ['keys', []],
    ['keys', Array.from({ length: 1001 }, (_, i) => `k${i}`)],
    ['keys.1', ''],
    ['keys.0', '€'.repeat(400)],
    ['at', -1],
  ])('names %s in an invalidation', (field, replacement) => {
    malformedAt(() => decodeInvalidation(patched(invalidation, field, replacement)), field)
  })

  it('accepts an invalidation of exactly 1000 keys', () => {
    const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`)
    expect(decodeInvalidation(encodeInvalidation({ ...invalidation, keys })).keys).toHaveLength(1000)
  })
})

describe('compact candidates', () => {
  it('decode the tuple agents send into the same entry as the object form, and name a bad field in either', () => {
    const base = {
      v: WIRE_VERSION,
      kind: 'report',
      agentId: 'a',
      seq: 1,
      windowStart: 0,
      windowMs: 1000,
      total: 9,
      dropped: 0,
    }
    const text = JSON.stringify({
      ...base,
      candidates: [compactCandidate('k', 5, 4, 1, 0), compactCandidate('m', 3, 3, 0, 2), ['o', 1, 1, 0]],
    })
    expect(text).toContain('["k",5,4,1]')
    expect(decodeReport(text).candidates).toEqual([
      { key: 'k', count: 5, reads: 4, writes: 1, misses: 0 },
      { key: 'm', count: 3, reads: 3, writes: 0, misses: 2 },
      { key: 'o', count: 1, reads: 1, writes: 0, misses: 0 },
    ])
    const bad = safeDecodeReport(JSON.stringify({ ...base, candidates: [['k', 5, -1, 0]] }))
    expect(!bad.ok && bad.error instanceof MalformedMessageError && bad.error.field).toBe(
      'candidates.0.reads',
    )
    const short = safeDecodeReport(JSON.stringify({ ...base, candidates: [['k', 5]] }))
    expect(!short.ok && short.error instanceof MalformedMessageError && short.error.field).toBe(
      'candidates.0',
    )
  })
})
