import { seededRandom } from '@heatsink/workload'
import { describe, expect, it } from 'vitest'
import { Candidate } from '../src/candidate.js'
import { CandidateIndex } from '../src/candidate-index.js'

function candidate(id: number, h1: number): Candidate {
  const c = new Candidate(`k${id}`, 4)
  c.h1 = h1
  c.h2 = id
  return c
}

describe('CandidateIndex', () => {
  it('agrees with a Map through random adds and deletes, colliding probe runs and growth included', () => {
    const random = seededRandom(11)
    const index = new CandidateIndex(8)
    const reference = new Map<number, Candidate>()
    for (let step = 0; step < 20_000; step++) {
      const id = Math.floor(random() * 200)
      // Few distinct h1 values force long shared probe runs, where deletion is easiest to get wrong.
      const h1 = (id % 7) * 16
      const present = reference.get(id)
      if (present !== undefined && random() < 0.5) {
        index.delete(present)
        reference.delete(id)
      } else if (present === undefined) {
        const c = candidate(id, h1)
        index.add(c)
        reference.set(id, c)
      }
      if (step % 97 === 0) {
        for (let probe = 0; probe < 200; probe++) {
          expect(index.get((probe % 7) * 16, probe)).toBe(reference.get(probe))
        }
      }
    }
    expect(index.size).toBe(reference.size)
  })

  it('tells apart fingerprints that share one lane', () => {
    const index = new CandidateIndex(4)
    const a = candidate(1, 5)
    const b = candidate(2, 5)
    index.add(a)
    index.add(b)
    expect(index.get(5, 1)).toBe(a)
    expect(index.get(5, 2)).toBe(b)
    expect(index.get(5, 3)).toBeUndefined()
  })
})
