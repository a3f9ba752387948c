import { describe, expect, it } from 'vitest'
import {
  createNames,
  HEATSINK_NAME_PARTS,
  InvalidNamespaceError,
  redisClusterSlot,
  slotTag,
} from '../src/index.js'

function allNames(names: ReturnType<typeof createNames>): string[] {
  return [
    ...names.reportStreams,
    names.deadLetterStream,
    names.consumerGroup,
    names.registryChannel,
    names.invalidationChannel,
    names.tuningChannel,
    names.tuningKey,
    names.registrySnapshotKey,
    names.leaseKey('product:1'),
    names.agentsKey,
  ]
}

// Sample arguments for each name builder, by its arity: a key; a window and shard; a split layout.
const SAMPLE_ARGS: Record<number, unknown[]> = {
  1: ['product:1'],
  2: [60_000, 3],
  4: ['product:1', 2, 1, 'a'],
}

describe('createNames', () => {
  it('lists every name it builds in HEATSINK_NAME_PARTS, the names front doors refuse to clients', () => {
    const names = createNames('ns')
    const built: string[] = ['ns:filled']
    for (const [field, value] of Object.entries(names)) {
      if (field === 'namespace') continue
      if (typeof value === 'string') built.push(value)
      else if (Array.isArray(value)) built.push(...value)
      else built.push((value as (...args: unknown[]) => string)(...(SAMPLE_ARGS[value.length] ?? [])))
    }
    expect(built.length).toBeGreaterThan(25)
    for (const name of built) {
      const rest = name.slice('ns:'.length)
      const covered =
        HEATSINK_NAME_PARTS.single.includes(rest) ||
        HEATSINK_NAME_PARTS.families.some((f) => rest.startsWith(f))
      expect(covered, name).toBe(true)
    }
  })

  it('builds the documented names under the default namespace', () => {
    const names = createNames()
    expect(names.namespace).toBe('heatsink')
    expect(names.reportStreams).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => `heatsink:reports:${i}`))
    expect(names.deadLetterStream).toBe('heatsink:reports:dead')
    expect(names.consumerGroup).toBe('heatsink:aggregators')
    expect(names.registryChannel).toBe('heatsink:registry')
    expect(names.invalidationChannel).toBe('heatsink:invalidate')
    expect(names.tuningChannel).toBe('heatsink:tuning')
    expect(names.tuningKey).toBe('heatsink:tuning:latest')
    expect(names.registrySnapshotKey).toBe('heatsink:registry:snapshot')
    expect(names.leaseKey('product:12345')).toBe('heatsink:lease:{41q}:product:12345')
    expect(names.agentsKey).toBe('heatsink:agents')
  })

  it('puts every name under the namespace, and no two alike', () => {
    const names = createNames('t-1.a_b:c', { reportShards: 4 })
    const all = allNames(names)
    for (const name of all) expect(name.startsWith('t-1.a_b:c:')).toBe(true)
    expect(new Set(all).size).toBe(all.length)
    expect(names.reportStreams).toHaveLength(4)
  })

  it('keeps two namespaces apart', () => {
    const a = new Set(allNames(createNames('alpha')))
    for (const name of allNames(createNames('beta'))) expect(a.has(name)).toBe(false)
  })

  it('returns frozen names', () => {
    const names = createNames()
    expect(Object.isFrozen(names)).toBe(true)
    expect(Object.isFrozen(names.reportStreams)).toBe(true)
  })

  it.each(['', 'a'.repeat(65), 'has space', 'tag{x}', 'slash/ns', 'ünïcode'])(
    'rejects namespace %j',
    (ns) => {
      expect(() => createNames(ns)).toThrow(InvalidNamespaceError)
      try {
        createNames(ns)
      } catch (error) {
        expect(error).toMatchObject({ code: 'E_INVALID_NAMESPACE', name: 'InvalidNamespaceError' })
        expect((error as Error).message).toContain('1 to 64 characters')
      }
    },
  )

  it('accepts a 64-character namespace', () => {
    expect(createNames('n'.repeat(64)).agentsKey).toBe(`${'n'.repeat(64)}:agents`)
  })

  it.each([0, -1, 1.5, 2000])('rejects reportShards %d', (reportShards) => {
    expect(() => createNames('hs', { reportShards })).toThrow(RangeError)
  })

  it('chooses a report stream by agent id, stably', () => {
    const names = createNames()
    const again = createNames()
    const used = new Set<string>()
    for (let i = 0; i < 200; i++) {
      const stream = names.reportStreamFor(`agent-${i}`)
      expect(names.reportStreams).toContain(stream)
      expect(again.reportStreamFor(`agent-${i}`)).toBe(stream)
      used.add(stream)
    }
    // 200 ids over 8 streams: a working hash uses them all.
    expect(used.size).toBe(8)
  })

  it('pins the stream choice so agents built from other releases agree', () => {
    // FNV-1a 32 of the UTF-8 id, modulo the shard count.
    const names = createNames()
    expect(names.reportStreamFor('')).toBe('heatsink:reports:5') // 0x811c9dc5 % 8
    expect(names.reportStreamFor('a')).toBe('heatsink:reports:4') // 0xe40c292c % 8
  })

  it('spreads the default report streams over the slot ranges of a 3-master cluster', () => {
    const ranges = createNames().reportStreams.map((stream) => {
      const slot = redisClusterSlot(stream)
      return slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2
    })
    // Observed: slots 14392, 10265, 6266, 2139, 14524, 10397, 6398, 2271 -> all three ranges.
    expect(new Set(ranges).size).toBeGreaterThanOrEqual(2)
  })
})

describe('window counters', () => {
  it('keep one window-shard in one slot and spread shards and windows over the slot space', () => {
    const names = createNames('heatsink')
    const key = names.windowCountersKey(1_700_000_000_000, 3)
    expect(key.startsWith('heatsink:')).toBe(true)
    expect(redisClusterSlot(key)).toBe(redisClusterSlot('{1700000000000:3}'))
    const slots = new Set(
      Array.from({ length: 16 }, (_, shard) => redisClusterSlot(names.windowCountersKey(0, shard))),
    )
    expect(slots.size).toBe(16)
  })
})

describe('split names', () => {
  const names = createNames('hs')
  const keys = ['likes:post:9001', 'user:{42}:followers', 'odd}key{', '{}empty', 'ключ', '{a}{b}']

  it('put each shard and its gate in the slot of the given tag, whatever braces the key holds', () => {
    for (const key of keys) {
      for (const slot of [0, 5461, 10923, 16383]) {
        const tag = slotTag(slot)
        expect(redisClusterSlot(names.splitShardKey(key, 8, 3, tag))).toBe(slot)
        expect(redisClusterSlot(names.splitGateKey(key, 8, 3, tag))).toBe(slot)
      }
    }
  })

  it('pin the shard name format', () => {
    expect(names.splitShardKey('likes:1', 8, 3, 'a1')).toBe('hs:split:{a1}:8:3:d:likes:1')
    expect(names.splitGateKey('likes:1', 8, 3, 'a1')).toBe('hs:split:{a1}:8:3:g:likes:1')
  })

  it('never give two shards, layouts or roles the same name', () => {
    const all = new Set<string>()
    let count = 0
    for (const key of ['k', 'k:g:k', 'd:k', 'k:d']) {
      for (const n of [2, 4, 8]) {
        for (let i = 0; i < n; i++) {
          all.add(names.splitShardKey(key, n, i, 'x')).add(names.splitGateKey(key, n, i, 'x'))
          count += 2
        }
      }
    }
    expect(all.size).toBe(count)
  })

  it("keep the per-key helpers in the key's own slot, under the namespace, apart from the cache lease", () => {
    for (const key of keys) {
      const helpers = [
        names.splitLeaseKey(key),
        names.splitJournalKey(key),
        names.splitRoutesKey(key),
        names.splitTouchedKey(key),
        names.splitStampKey(key),
      ]
      for (const name of helpers) {
        expect(redisClusterSlot(name)).toBe(redisClusterSlot(key))
        expect(name.startsWith('hs:split-')).toBe(true)
      }
      expect(new Set([...helpers, names.leaseKey(key)]).size).toBe(6)
    }
    expect(names.splitReconcilerLeaseKey).toBe('hs:split-reconciler')
    expect(names.splitFoldedKey).toBe('hs:split-folded')
  })

  it.each([
    [1, 0, 'a'],
    [8, 8, 'a'],
    [8, -1, 'a'],
    [8, 1.5, 'a'],
    [2.5, 0, 'a'],
    [8, 0, ''],
    [8, 0, 'a}b'],
    [8, 0, '{a}'],
  ])('rejects splitFactor %d, index %d, tag %j', (n, index, tag) => {
    expect(() => names.splitShardKey('k', n, index, tag)).toThrow(RangeError)
    expect(() => names.splitGateKey('k', n, index, tag)).toThrow(RangeError)
  })
})
