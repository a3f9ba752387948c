import { ManualClock } from '@heatsink/sketch'
import { describe, expect, it } from 'vitest'
import { FillAbandonedError } from '../src/errors.js'
import { PendingFills } from '../src/l1/pending-fills.js'
import { deferred } from './support/helpers.js'

describe('PendingFills', () => {
  it('passes a fill’s reply or error through, and forgets it and its deadline once it settled', async () => {
    const clock = new ManualClock()
    const fills = new PendingFills(clock, 500)
    const answered = deferred<string>()
    const failed = deferred<string>()
    const replies = [fills.watch('a', answered.promise), fills.watch('b', failed.promise)]
    expect(fills.size).toBe(2)
    answered.resolve('value')
    failed.reject(new Error('WRONGTYPE'))
    expect(await replies[0]).toBe('value')
    await expect(replies[1]).rejects.toThrow('WRONGTYPE')
    expect(fills.size).toBe(0)
    expect(clock.pending).toBe(0)
  })

  it('abandons a fill with no reply at its deadline exactly, and ignores the reply that comes after', async () => {
    const clock = new ManualClock()
    const fills = new PendingFills(clock, 500)
    const late = deferred<string>()
    const watched = fills.watch('key', late.promise)
    clock.advance(499)
    expect(fills.size).toBe(1)
    clock.advance(1)
    const error = await watched.catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(FillAbandonedError)
    expect(error).toMatchObject({ code: 'E_FILL_ABANDONED', key: 'key' })
    expect((error as Error).message).toMatch(/no reply within 500 ms/)
    late.resolve('old value')
    await expect(watched).rejects.toBe(error)
    expect(fills.size).toBe(0)
  })

  it('abandons every fill in flight at once when told, saying why, and clears their deadlines', async () => {
    const clock = new ManualClock()
    const fills = new PendingFills(clock, 500)
    const watched = ['a', 'b', 'c'].map((key) => fills.watch(key, deferred<string>().promise))
    fills.abandonAll('the tracking connection was lost')
    for (const fill of watched)
      await expect(fill).rejects.toThrow(/abandoned: the tracking connection was lost/)
    expect(fills.size).toBe(0)
    expect(clock.pending).toBe(0)
    // A fill after the loss has a deadline of its own.
    void fills.watch('d', deferred<string>().promise).catch(() => {})
    expect(clock.pending).toBe(1)
  })
})
