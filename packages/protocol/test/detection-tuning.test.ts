import { describe, expect, it } from 'vitest'
import {
  type DetectionTuning,
  encodeTuning,
  MAX_WATCHED_KEYS,
  safeDecodeTuning,
  signRegistryMessage,
  verifyRegistryMessage,
  WIRE_VERSION,
} from '../src/index.js'

const tuning: DetectionTuning = {
  v: WIRE_VERSION,
  kind: 'tuning',
  at: 1_700_000_000_000,
  activeAgents: 200,
  reportFloor: 5,
  watch: ['product:1', 'a\u0000b'],
  watchWindows: 5,
}

describe('detection tuning messages', () => {
  it('round-trip, and verify when signed with the registry key', () => {
    const decoded = safeDecodeTuning(encodeTuning(tuning))
    expect(decoded).toEqual({ ok: true, value: tuning })
    const key = 'k'.repeat(40)
    const signed = signRegistryMessage(encodeTuning(tuning), key)
    expect(verifyRegistryMessage(signed, key)).toBe(true)
    const tampered = signed.replace('"reportFloor":5', '"reportFloor":1')
    expect(verifyRegistryMessage(tampered, key)).toBe(false)
  })

  it('name the bad field, and bound the watch list', () => {
    const zeroFloor = safeDecodeTuning(JSON.stringify({ ...tuning, reportFloor: 0 }))
    expect(zeroFloor.ok).toBe(false)
    if (!zeroFloor.ok) expect(zeroFloor.error.message).toContain('reportFloor')
    const tooMany = Array.from({ length: MAX_WATCHED_KEYS + 1 }, (_, i) => `k${i}`)
    const long = safeDecodeTuning(JSON.stringify({ ...tuning, watch: tooMany }))
    expect(long.ok).toBe(false)
    if (!long.ok) expect(long.error.message).toContain('watch')
    expect(safeDecodeTuning(JSON.stringify({ ...tuning, kind: 'report' })).ok).toBe(false)
  })
})
