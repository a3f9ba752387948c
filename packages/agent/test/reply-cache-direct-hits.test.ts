import { ManualClock } from '@heatsink/sketch'
import { describe, expect, it } from 'vitest'
import { AgentCounters } from '../src/events/stats.js'
import { ReplyCache, type ReplySlot } from '../src/l1/reply-cache.js'

function cache(maxEntries = 512) {
  const clock = new ManualClock(1_000_000)
  const replies = new ReplyCache(
    { maxEntries, ttlFraction: 0.2, maxTtlMs: 5000, maxBytes: 64 * 1024 * 1024 },
    clock,
    new AgentCounters(),
  )
  replies.setUsable(true)
  // A key admitted and filled with `value`; its slot, as a HotKey is one.
  const filled = async (key: string, value: string, pttl = -1): Promise<ReplySlot> => {
    replies.admit(key)
    await replies.load(key, 'get', async () => [value, pttl] as const)
    return { key, replies: undefined }
  }
  return { replies, clock, filled }
}

// A hit through a key's slot (its HotKey's pointer to its entry) answers what the LRU holds, and nothing else:
// every way an entry leaves clears the pointer, and the pointer is never read past the entry's lifetime.
describe('ReplyCache hits through a key slot', () => {
  it('answers from the entry while its lifetime runs, and never after', async () => {
    const { replies, clock, filled } = cache()
    // PTTL 10 s: a lifetime of 2 s.
    const slot = await filled('k', 'a', 10_000)
    expect(replies.hit(slot, 'get')?.raw).toBe('a')
    expect(slot.replies).toBeDefined()
    expect(replies.hit(slot, 'other')).toBeUndefined()
    clock.advance(1999)
    expect(replies.hit(slot, 'get')?.raw).toBe('a')
    clock.advance(1)
    expect(replies.hit(slot, 'get')?.raw).toBe(replies.get('k', 'get')?.raw)
    clock.advance(1)
    expect(replies.hit(slot, 'get')).toBeUndefined()
    expect(slot.replies).toBeUndefined()
  })

  it.each([
    ['an invalidation', (c: ReplyCache) => c.invalidate('k', 'tracking')],
    ['a retirement', (c: ReplyCache) => c.retire('k')],
    ['a flush', (c: ReplyCache) => c.invalidateAll('tracking')],
    ['a lost channel', (c: ReplyCache) => c.setUsable(false)],
    ['a close', (c: ReplyCache) => c.clear()],
  ])('forgets the entry on %s', async (_what, drop) => {
    const { replies, filled } = cache()
    const slot = await filled('k', 'a')
    expect(replies.hit(slot, 'get')?.raw).toBe('a')
    drop(replies)
    expect(slot.replies).toBeUndefined()
    expect(replies.hit(slot, 'get')).toBeUndefined()
  })

  it('answers the new entry after the key is invalidated and filled again', async () => {
    const { replies, filled } = cache()
    const slot = await filled('k', 'a')
    expect(replies.hit(slot, 'get')?.raw).toBe('a')
    replies.invalidate('k', 'tracking')
    await replies.load('k', 'get', async () => ['b', -1] as const)
    expect(replies.hit(slot, 'get')?.raw).toBe('b')
  })

  it('keeps LRU order for keys read through their slot, and forgets an evicted entry', async () => {
    const { replies, clock, filled } = cache(3)
    const a = await filled('a', 'A')
    await filled('b', 'B')
    await filled('c', 'C')
    // a read through its slot becomes the most recent, then b by a plain lookup.
    expect(replies.hit(a, 'get')?.raw).toBe('A')
    expect(replies.get('b', 'get')?.raw).toBe('B')
    // a was moved less than 100 ms ago: this hit leaves the order as it is. 100 ms later, a hit moves it again.
    expect(replies.hit(a, 'get')?.raw).toBe('A')
    clock.advance(100)
    expect(replies.hit(a, 'get')?.raw).toBe('A')
    await filled('d', 'D')
    expect(replies.get('c', 'get')).toBeUndefined()
    expect(replies.get('b', 'get')?.raw).toBe('B')
    // Order now a, d, b: the next key pushes a out, and its slot with it.
    await filled('e', 'E')
    expect(a.replies).toBeUndefined()
    expect(replies.hit(a, 'get')).toBeUndefined()
  })
})
