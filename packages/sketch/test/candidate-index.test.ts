import { describe, expect, it } from 'vitest'
import { Candidate } from '../src/candidate.js'
import { CandidateIndex } from '../src/candidate-index.js'
import { KeyHasher } from '../src/key-hasher.js'

const hasher = new KeyHasher(7)

function fingerprint(key: string): [number, number] {
  hasher.hash(key)
  return [hasher.h1, hasher.h2]
}

function add(index: CandidateIndex, key: string, onRequest = false): Candidate {
  const candidate = new Candidate(key, 4)
  index.add(candidate, ...fingerprint(key), onRequest)
  return candidate
}

describe('CandidateIndex', () => {
  it('finds every candidate by name, only the ones marked on the request there, and forgets a deleted one', () => {
    const index = new CandidateIndex()
    const warm = add(index, 'warm')
    const hot = add(index, 'hot', true)
    expect(index.get('warm')).toBe(warm)
    expect(index.onRequest('warm')).toBeUndefined()
    expect(index.onRequest('hot')).toBe(hot)
    index.findOnRequest(warm)
    expect(index.onRequest('warm')).toBe(warm)
    index.delete(warm)
    expect(index.get('warm')).toBeUndefined()
    expect(index.onRequest('warm')).toBeUndefined()
    expect([...index.all.keys()]).toEqual(['hot'])
  })

  it('never says no for a candidate’s fingerprint, says no for almost every other one, and frees a slot only with its last candidate', () => {
    const index = new CandidateIndex()
    const candidates = Array.from({ length: 256 }, (_, i) => add(index, `candidate:${i}`))
    for (const { key } of candidates) expect(index.mayHold(...fingerprint(key))).toBe(true)
    const others = Array.from({ length: 20_000 }, (_, i) => `other:${i}`)
    const maybe = others.filter((key) => index.mayHold(...fingerprint(key))).length
    // 256 candidates in 16,384 slots: about 1.6% of other keys share a slot with one.
    expect(maybe / others.length).toBeLessThan(0.03)

    // A slot shared by candidates stays taken until the last of them has gone.
    const sharer = others.find((key) => index.mayHold(...fingerprint(key))) as string
    const second = add(index, sharer)
    const holders = candidates.filter((c) => c.slot === second.slot)
    expect(holders.length).toBeGreaterThan(0)
    for (const holder of holders) index.delete(holder)
    expect(index.mayHold(...fingerprint(sharer))).toBe(true)
    index.delete(second)
    expect(index.mayHold(...fingerprint(sharer))).toBe(false)
    // Deleting what is not indexed changes nothing.
    const remaining = candidates.filter((c) => !holders.includes(c))
    index.delete(second)
    expect(remaining.every(({ key }) => index.mayHold(...fingerprint(key)))).toBe(true)
    expect(index.all.size).toBe(remaining.length)
  })
})
