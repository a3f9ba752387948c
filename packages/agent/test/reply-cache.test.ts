import { ManualClock } from '@heatsink/sketch'
import { encodeEnvelope, jsonCodec } from '@heatsink/stampede'
import { describe, expect, it } from 'vitest'
import { AgentCounters } from '../src/events/stats.js'
import { L1Loads } from '../src/get-or-load/l1-loads.js'
import { ReplyCache, type ReplyFill } from '../src/l1/reply-cache.js'
import { deferred } from './support/helpers.js'

type Fill = (name: string) => Promise<ReplyFill>

/**
 * The one L1 (the router's ReplyCache) as a plain GET sees it: `get` answers the cached reply of GET (null for a
 * cached absence, undefined on a miss), `load` fills it.
 */
class GetView {
  readonly cache: ReplyCache
  constructor(cache: ReplyCache) {
    this.cache = cache
  }
  get(name: string): unknown {
    return this.cache.get(name, 'get')?.raw
  }
  load(name: string, fill: Fill): Promise<unknown> | undefined {
    return this.cache.load(name, 'get', () => fill(name))
  }
  admit(name: string): void {
    this.cache.admit(name)
  }
  retire(name: string): void {
    this.cache.retire(name)
  }
  invalidate(name: string, source: 'tracking' | 'pubsub'): void {
    this.cache.invalidate(name, source)
  }
  invalidateAll(source: 'tracking'): void {
    this.cache.invalidateAll(source)
  }
  setUsable(usable: boolean): void {
    this.cache.setUsable(usable)
  }
  get size(): number {
    return this.cache.size
  }
  get bytes(): number {
    return this.cache.bytes
  }
}

// L1's options as the agent resolves them by default (those cache() starts from).
const L1_RULES = { ttlFraction: 0.2, maxTtlMs: 5000, maxEntries: 512 }

function cache(
  options: { maxEntries?: number; ttlFraction?: number; maxTtlMs?: number; maxBytes?: number } = {},
) {
  const clock = new ManualClock(1_000_000)
  const counters = new AgentCounters()
  const replies = new ReplyCache(
    { maxEntries: 512, ttlFraction: 0.2, maxTtlMs: 5000, maxBytes: 64 * 1024 * 1024, ...options },
    clock,
    counters,
  )
  replies.setUsable(true)
  return { l1: new GetView(replies), replies, clock, counters }
}

/** A fill whose answer the test gives, and how many fills started. */
function controlledFill() {
  const pending: Array<ReturnType<typeof deferred<ReplyFill>>> = []
  return {
    pending,
    fill: (_name: string) => {
      const answer = deferred<ReplyFill>()
      pending.push(answer)
      return answer.promise
    },
  }
}

describe('L1 (ReplyCache), as GET and getOrLoad see it', () => {
  it('fills only admitted keys, and only while usable', () => {
    const { l1 } = cache()
    const { fill, pending } = controlledFill()
    expect(l1.load('k', fill)).toBeUndefined()
    l1.admit('k')
    l1.setUsable(false)
    expect(l1.load('k', fill)).toBeUndefined()
    l1.setUsable(true)
    expect(l1.load('k', fill)).toBeDefined()
    expect(pending).toHaveLength(1)
  })

  it('keeps an entry for ttlFraction of the key PTTL, capped, and the cap for keys without TTL', async () => {
    const { l1, clock } = cache()
    const { fill, pending } = controlledFill()
    for (const key of ['ttl10s', 'ttl100s', 'none', 'absent']) l1.admit(key)
    const loads = ['ttl10s', 'ttl100s', 'none', 'absent'].map((key) => l1.load(key, fill))
    pending[0]?.resolve(['a', 10_000])
    pending[1]?.resolve(['b', 100_000])
    pending[2]?.resolve(['c', -1])
    pending[3]?.resolve([null, -2])
    expect(await Promise.all(loads)).toEqual(['a', 'b', 'c', null])
    expect(l1.get('absent')).toBeNull()
    clock.advance(2000)
    expect(l1.get('ttl10s')).toBe('a')
    clock.advance(1)
    expect(l1.get('ttl10s')).toBeUndefined()
    clock.advance(2999)
    expect([l1.get('ttl100s'), l1.get('none'), l1.get('absent')]).toEqual(['b', 'c', null])
    clock.advance(1)
    expect([l1.get('ttl100s'), l1.get('none'), l1.get('absent')]).toEqual([undefined, undefined, undefined])
  })

  it('keeps a getOrLoad envelope as Redis holds it for plain reads, for ttlFraction of its logical TTL, its value decoded once', async () => {
    const { l1, replies, clock } = cache()
    const loads = new L1Loads(replies, async () => [null, -2] as const, clock, L1_RULES)
    const envelope = (expiresAt: number, kind: 'v' | 'u' | 'n', payload = '') =>
      encodeEnvelope({ expiresAt, deltaMs: 5, kind, payload })
    const fillOf = (text: string, pttl: number) => async () => [text, loads.fillPttl(text, pttl)] as const
    l1.admit('k')
    // A PTTL of 70 s (a 60 s stale window included) but 10 s of logical TTL: the entry lives 0.2 x 10 s.
    const text = envelope(clock.now() + 10_000, 'v', '{"a":1}')
    expect(await l1.load('k', fillOf(text, 70_000))).toBe(text)
    expect(l1.get('k')).toBe(text)
    const loaded = loads.get('k', jsonCodec)
    expect(loaded?.value).toEqual({ value: { a: 1 } })
    expect(loads.get('k', jsonCodec)?.value.value).toBe(loaded?.value.value)
    clock.advance(2000)
    expect(loads.get('k', jsonCodec)?.live).toBe(true)
    clock.advance(1)
    expect(loads.get('k', jsonCodec)).toBeUndefined()

    // A value past its logical expiry (in its stale window) is what Redis holds for plain reads; for getOrLoad it
    // is no value to return, only a late load's fallback, until invalidated.
    l1.admit('stale')
    const stale = envelope(clock.now() - 1, 'v', '2')
    expect(await l1.load('stale', fillOf(stale, 50_000))).toBe(stale)
    expect(l1.get('stale')).toBe(stale)
    expect(loads.get('stale', jsonCodec)?.live).toBe(false)
    expect(loads.fallback('stale', jsonCodec)).toEqual({ value: 2 })
    l1.invalidate('stale', 'pubsub')
    expect(loads.fallback('stale', jsonCodec)).toBeUndefined()

    // A negative entry is a value (null) for getOrLoad, and the envelope's text for a plain read.
    l1.admit('none')
    const negative = envelope(clock.now() + 5_000, 'n')
    await l1.load('none', fillOf(negative, 5_000))
    expect(l1.get('none')).toBe(negative)
    expect(loads.get('none', jsonCodec)?.value).toEqual({ value: null })
    // A plain value is decoded by the codec; an absent key is no value for getOrLoad.
    l1.admit('plain')
    l1.admit('absent')
    await l1.load('plain', async () => ['[1,2]', -1] as const)
    await l1.load('absent', async () => [null, -2] as const)
    expect(loads.get('plain', jsonCodec)?.value).toEqual({ value: [1, 2] })
    expect(l1.get('absent')).toBeNull()
    expect(loads.get('absent', jsonCodec)).toBeUndefined()
  })

  it("keeps an envelope's first lifetime through its refills, and has getOrLoad refresh it once in its last one", async () => {
    const { l1, replies, clock } = cache()
    const loads = new L1Loads(replies, async () => [null, -2] as const, clock, L1_RULES)
    const text = encodeEnvelope({ expiresAt: clock.now() + 10_000, deltaMs: 5, kind: 'v', payload: '1' })
    const fill = (pttl: number) => async () => [text, loads.fillPttl(text, pttl)] as const
    l1.admit('k')
    await l1.load('k', fill(10_000))
    expect(loads.get('k', jsonCodec)?.refreshDue).toBe(false)
    // Refilled 4 s in, with 6 s left: the entry lives 2 s again, not 0.2 x 6 s.
    clock.advance(4_000)
    expect(l1.get('k')).toBeUndefined()
    await l1.load('k', fill(6_000))
    clock.advance(2_000)
    expect(loads.get('k', jsonCodec)?.refreshDue).toBe(false)
    clock.advance(1)
    expect(l1.get('k')).toBeUndefined()
    // Refilled 8 s in: its last lifetime, so the first hit starts a refresh, and only the first.
    clock.advance(1_999)
    await l1.load('k', fill(2_000))
    expect(loads.get('k', jsonCodec)?.refreshDue).toBe(true)
    expect(loads.get('k', jsonCodec)?.refreshDue).toBe(false)
    expect(loads.get('k', jsonCodec)?.live).toBe(true)
  })

  it('does not store a value whose lifetime would be under 1 ms', async () => {
    const { l1 } = cache()
    l1.admit('k')
    expect(await l1.load('k', async () => ['v', 4] as const)).toBe('v')
    expect(l1.get('k')).toBeUndefined()
  })

  it('shares one fill among concurrent misses of a key', async () => {
    const { l1 } = cache()
    const { fill, pending } = controlledFill()
    l1.admit('k')
    const first = l1.load('k', fill)
    const second = l1.load('k', fill)
    expect(second).toBe(first)
    expect(pending).toHaveLength(1)
    pending[0]?.resolve(['v', -1])
    expect(await Promise.all([first, second])).toEqual(['v', 'v'])
    expect(l1.get('k')).toBe('v')
  })

  it('drops a fill whose key was invalidated while it was in flight, and starts a new one after', async () => {
    const { l1, counters } = cache()
    const { fill, pending } = controlledFill()
    l1.admit('k')
    const stale = l1.load('k', fill)
    l1.invalidate('k', 'tracking')
    expect(counters.l1Invalidations.tracking).toBe(1)
    const fresh = l1.load('k', fill)
    expect(fresh).not.toBe(stale)
    // The old read answers last-but-one: it must not be stored.
    pending[0]?.resolve(['old', -1])
    expect(await stale).toBe('old')
    expect(l1.get('k')).toBeUndefined()
    pending[1]?.resolve(['new', -1])
    expect(await fresh).toBe('new')
    expect(l1.get('k')).toBe('new')
  })

  it('drops fills in flight and every entry when a channel is lost, and fills nothing until it is back', async () => {
    const { l1, counters } = cache()
    const { fill, pending } = controlledFill()
    l1.admit('a')
    l1.admit('b')
    const a = l1.load('a', fill)
    pending[0]?.resolve(['1', -1])
    await a
    const b = l1.load('b', fill)
    l1.setUsable(false)
    expect(counters.l1Invalidations.channelLoss).toBe(2)
    expect(l1.size).toBe(0)
    expect(l1.load('a', fill)).toBeUndefined()
    l1.setUsable(true)
    pending[1]?.resolve(['2', -1])
    await b
    expect(l1.get('b')).toBeUndefined()
  })

  it('retiring a key (demotion) removes it and voids its fill', async () => {
    const { l1, counters } = cache()
    const { fill, pending } = controlledFill()
    l1.admit('k')
    const load = l1.load('k', fill)
    l1.retire('k')
    pending[0]?.resolve(['v', -1])
    await load
    expect(l1.get('k')).toBeUndefined()
    expect(counters.l1Invalidations.registry).toBe(1)
    // Promoted again: a new generation, so nothing from before can land.
    l1.admit('k')
    expect(l1.load('k', fill)).toBeDefined()
  })

  it('a flush (null tracking message) empties everything', async () => {
    const { l1, counters } = cache()
    for (const key of ['a', 'b', 'c']) {
      l1.admit(key)
      await l1.load(key, async () => [key, -1] as const)
    }
    l1.invalidateAll('tracking')
    expect(l1.size).toBe(0)
    expect(counters.l1Invalidations.tracking).toBe(3)
  })

  it('holds at most maxEntries and counts what the LRU pushes out', async () => {
    const { l1, counters } = cache({ maxEntries: 512 })
    for (let i = 0; i < 600; i++) {
      l1.admit(`k${i}`)
      await l1.load(`k${i}`, async () => ['v', -1] as const)
    }
    expect(l1.size).toBe(512)
    expect(counters.l1Evictions).toBe(88)
    expect(l1.get('k0')).toBeUndefined()
    expect(l1.get('k599')).toBe('v')
  })

  it('holds at most maxBytes, evicting the least recently used, and caches no entry over an eighth of that', async () => {
    // 65,536 bytes: all of it for the one L1, and one entry at most 8,192.
    const { l1, counters } = cache({ maxBytes: 65_536 })
    const value = 'v'.repeat(1500)
    for (let i = 0; i < 80; i++) {
      l1.admit(`k${i}`)
      expect(await l1.load(`k${i}`, async () => [value, -1] as const)).toBe(value)
    }
    expect(l1.bytes).toBeGreaterThan(32_768)
    expect(l1.bytes).toBeLessThanOrEqual(65_536)
    expect(counters.l1Evictions).toBeGreaterThan(0)
    expect(l1.size).toBeLessThan(80)
    // The latest keys stayed, the first went.
    expect(l1.get('k79')).toBe(value)
    expect(l1.get('k0')).toBeUndefined()

    const large = 'x'.repeat(5000)
    l1.admit('large')
    expect(await l1.load('large', async () => [large, -1] as const)).toBe(large)
    expect(l1.get('large')).toBeUndefined()
    expect(counters.l1TooLarge).toBe(1)
  })
})
