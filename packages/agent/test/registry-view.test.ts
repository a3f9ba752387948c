import {
  encodeRegistryEvent,
  encodeSnapshot,
  type Mitigation,
  type RegistryEntry,
  WIRE_VERSION,
} from '@heatsink/protocol'
import { ManualClock } from '@heatsink/sketch'
import { describe, expect, it } from 'vitest'
import { AgentCounters } from '../src/events/stats.js'
import { silentLogger } from '../src/options/resolve-options.js'
import type { HotKey, MitigationStrategy } from '../src/registry/hot-key.js'
import { RegistryView } from '../src/registry/registry-view.js'
import { registryEntry } from '../src/testing.js'
import { deferred, waitFor } from './support/helpers.js'

// The view only stores and hands out strategies; these tests never read or load through one.
const strategy: MitigationStrategy = {
  load: async () => {
    throw new Error('not loaded in these tests')
  },
  enter: () => {},
  leave: () => {},
}

function snapshot(version: number, entries: RegistryEntry[]): string {
  return encodeSnapshot({ v: WIRE_VERSION, kind: 'snapshot', version, at: 0, entries })
}

function promote(version: number, key: string, mitigation: Mitigation = 'local_cache'): string {
  return encodeRegistryEvent({
    v: WIRE_VERSION,
    kind: 'registry',
    version,
    at: 0,
    type: 'promote',
    entry: registryEntry(key, mitigation, version),
  })
}

function demote(version: number, key: string): string {
  return encodeRegistryEvent({
    v: WIRE_VERSION,
    kind: 'registry',
    version,
    at: 0,
    type: 'demote',
    key,
    keyHash: registryEntry(key, 'local_cache', 1).keyHash,
    reason: 'cooled',
  })
}

/** A view over a fake snapshot hash the test edits; reads can be held with `hold`. */
function view() {
  const stored = { version: null as string | null, snapshot: null as string | null }
  const reads: Array<ReturnType<typeof deferred<void>>> = []
  let hold = false
  const counters = new AgentCounters()
  const changes: string[] = []
  const registry = new RegistryView({
    readSnapshot: async () => {
      if (hold) {
        const gate = deferred<void>()
        reads.push(gate)
        await gate.promise
      }
      return stored.snapshot
    },
    readVersion: async () => stored.version,
    strategyFor: () => strategy,
    onChange: (hot: HotKey, before, after) => changes.push(`${hot.key}:${before ?? '-'}>${after ?? '-'}`),
    canCheck: () => true,
    counters,
    log: silentLogger,
  })
  return {
    registry,
    counters,
    changes,
    reads,
    set(version: number, entries: RegistryEntry[]) {
      stored.version = String(version)
      stored.snapshot = snapshot(version, entries)
    },
    raw(version: number, text: string) {
      stored.version = String(version)
      stored.snapshot = text
    },
    holdReads(on: boolean) {
      hold = on
    },
  }
}

describe('RegistryView', () => {
  it('loads the snapshot, then applies only the next version', async () => {
    const v = view()
    v.set(2, [registryEntry('a', 'local_cache', 1), registryEntry('b', 'split', 2)])
    await v.registry.reload()
    expect(v.registry.version).toBe(2)
    expect(v.registry.get('b')?.mitigation).toBe('split')
    v.registry.onMessage(promote(2, 'old'))
    expect(v.registry.get('old')).toBeUndefined()
    v.registry.onMessage(promote(3, 'c'))
    v.registry.onMessage(demote(4, 'a'))
    expect(v.registry.version).toBe(4)
    expect(v.changes).toEqual(['a:->local_cache', 'b:->split', 'c:->local_cache', 'a:local_cache>-'])
  })

  it('applies events that arrive while the snapshot loads, in version order, after it', async () => {
    const v = view()
    v.set(5, [registryEntry('a', 'local_cache', 5)])
    v.holdReads(true)
    const loading = v.registry.reload()
    v.registry.onMessage(promote(7, 'c'))
    v.registry.onMessage(promote(6, 'b'))
    v.registry.onMessage(promote(5, 'a'))
    v.reads[0]?.resolve()
    await loading
    expect(v.registry.version).toBe(7)
    expect([...v.registry.values()].map((hot) => hot.key)).toEqual(['a', 'b', 'c'])
  })

  it('reloads the snapshot on a version gap', async () => {
    const v = view()
    v.set(1, [registryEntry('a', 'local_cache', 1)])
    await v.registry.reload()
    // Versions 2 and 3 were lost; the hash already holds them.
    v.set(4, [
      registryEntry('a', 'local_cache', 1),
      registryEntry('b', 'coalesce', 2),
      registryEntry('c', 'split', 4),
    ])
    v.holdReads(true)
    v.registry.onMessage(promote(4, 'c', 'split'))
    expect(v.registry.version).toBe(1)
    v.reads[0]?.resolve()
    await waitFor(() => v.registry.version === 4, 'the reload')
    expect(v.registry.version).toBe(4)
    expect(v.registry.get('b')?.mitigation).toBe('coalesce')
    expect(v.counters.registryReloads).toBe(1)
  })

  it('a snapshot replacing the view reports removed and changed keys', async () => {
    const v = view()
    v.set(1, [registryEntry('a', 'local_cache', 1), registryEntry('b', 'local_cache', 1)])
    await v.registry.reload()
    v.set(3, [registryEntry('b', 'split', 3)])
    await v.registry.reload()
    expect(v.changes.slice(2)).toEqual(['a:local_cache>-', 'b:local_cache>split'])
  })

  it('the periodic check reloads when the stored version differs, and not otherwise', async () => {
    const v = view()
    const clock = new ManualClock(0)
    v.set(1, [])
    await v.registry.reload()
    v.registry.startChecks(clock, 2000)
    clock.advance(2000)
    await new Promise((resolve) => setImmediate(resolve))
    expect(v.counters.registryReloads).toBe(0)
    v.set(2, [registryEntry('x', 'local_cache', 2)])
    clock.advance(2000)
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    expect(v.registry.get('x')).toBeDefined()
    expect(v.counters.registryReloads).toBe(1)
    v.registry.stopChecks()
  })

  it('sets aside and counts malformed and wrong-version messages without throwing', async () => {
    const v = view()
    await v.registry.reload()
    v.registry.onMessage('not json')
    v.registry.onMessage(JSON.stringify({ v: 99, kind: 'registry' }))
    v.registry.onMessage(JSON.stringify({ v: WIRE_VERSION, kind: 'registry', type: 'promote', version: 1 }))
    expect(v.counters.badMessages).toBe(3)
    expect(v.registry.version).toBe(0)
    v.registry.onMessage(promote(1, 'ok'))
    expect(v.registry.version).toBe(1)
  })

  it('a malformed snapshot is counted and the view is kept', async () => {
    const v = view()
    v.set(1, [registryEntry('a', 'local_cache', 1)])
    await v.registry.reload()
    v.raw(2, '{"v":1,"kind":"snapshot","version":"two"}')
    await v.registry.reload()
    expect(v.counters.badMessages).toBe(1)
    expect(v.registry.version).toBe(1)
    expect(v.registry.get('a')).toBeDefined()
  })

  it('an absent snapshot hash is an empty registry at version 0', async () => {
    const v = view()
    await v.registry.reload()
    expect(v.registry.loaded).toBe(true)
    expect(v.registry.version).toBe(0)
    expect(v.registry.size).toBe(0)
  })
})
