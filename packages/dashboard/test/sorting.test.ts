import type { LiveHotKey } from '@heatsink/protocol'
import { describe, expect, it } from 'vitest'
import { visibleHotKeys } from '../src/sorting.js'

function hot(key: string, requestsPerSecond: number | null, detectedAt = 0): LiveHotKey {
  return {
    key,
    mitigation: 'local_cache',
    splitFactor: 1,
    source: 'auto',
    detectedAt,
    expiresAt: null,
    version: 1,
    requestsPerSecond,
    localCacheHitRatio: null,
    coalesceCollapseRatio: null,
    redisReadsBefore: null,
    redisReadsAfter: null,
    splitShardCounts: [],
  }
}

describe('the hot keys table', () => {
  const rows = [hot('post:7', 900), hot('Post:42', 5000), hot('cart:1', null), hot('post:9', 900)]

  it('sorts by rate, busiest first, with unknown rates last and ties in key order', () => {
    const sorted = visibleHotKeys(rows, '', { column: 'requestsPerSecond', descending: true })
    expect(sorted.map((r) => r.key)).toEqual(['Post:42', 'post:7', 'post:9', 'cart:1'])
    const ascending = visibleHotKeys(rows, '', { column: 'requestsPerSecond', descending: false })
    expect(ascending.map((r) => r.key)).toEqual(['post:7', 'post:9', 'Post:42', 'cart:1'])
  })

  it('filters by key text, ignoring case', () => {
    const filtered = visibleHotKeys(rows, ' POST ', { column: 'key', descending: false })
    expect(filtered.map((r) => r.key)).toEqual(['Post:42', 'post:7', 'post:9'])
    expect(visibleHotKeys(rows, 'nothing', { column: 'key', descending: false })).toEqual([])
  })
})
