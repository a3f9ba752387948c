import { registryEntry } from '@heatsink/agent/testing'
import {
  createNames,
  encodeRegistryEvent,
  encodeTuning,
  STREAM_FIELD,
  signRegistryMessage,
  WIRE_VERSION,
} from '@heatsink/protocol'
import { describe, expect, it } from 'vitest'
import { makeReport, sendReport } from '../../services/aggregator/test/support/reports.js'
import { useAgents } from './support/agents.js'
import { usePrivateServices } from './support/private-services.js'
import { until } from './support/until.js'
import { pendingReports } from './support/window-sums.js'

const world = usePrivateServices()
const newAgent = useAgents()
const REGISTRY_KEY = 'faults-registry-key-0123456789abcdef'
const window = () => Math.floor(Date.now() / 1000) * 1000

/** Report stream entries no agent would write: each must be dead-lettered with a reason, none counted. */
function garbageEntries(namespace: string): Array<Array<string | Buffer>> {
  const report = (extra: object) =>
    JSON.stringify({ ...makeReport('garbage', window(), { [`${namespace}:g`]: 5000 }), ...extra })
  return [
    [STREAM_FIELD, 'not json'],
    [STREAM_FIELD, '{'],
    [STREAM_FIELD, '{}'],
    [STREAM_FIELD, '[1,2,3]'],
    [STREAM_FIELD, 'null'],
    [STREAM_FIELD, Buffer.from([0xff, 0xfe, 0x00, 0x81])],
    [STREAM_FIELD, 'x'.repeat(200_000)],
    [STREAM_FIELD, report({ v: WIRE_VERSION + 98 })],
    [
      STREAM_FIELD,
      report({ candidates: [{ key: `${namespace}:g`, count: -5, reads: 0, writes: 0, misses: 0 }] }),
    ],
    [
      STREAM_FIELD,
      report({ candidates: [{ key: `${namespace}:g`, count: 'many', reads: 0, writes: 0, misses: 0 }] }),
    ],
    [STREAM_FIELD, report({ windowMs: 1 })],
    [STREAM_FIELD, report({ windowStart: window() + 17 })],
    [STREAM_FIELD, report({ windowStart: Date.UTC(2100, 0, 1) })],
    [STREAM_FIELD, report({ agentId: 'has spaces\nand a newline' })],
    ['not-the-message-field', report({})],
  ]
}

describe('garbage and forged messages on every stream, channel and key Heatsink reads', () => {
  it('report streams: every bad entry dead-lettered and counted by reason, nothing counted, ingest carries on', async () => {
    const { redis } = world()
    const names = createNames(redis.namespace)
    const replica = await world().startReplica({ HEATSINK_HOT_RPS: '1000' })
    const admin = redis.client()
    const entries = garbageEntries(redis.namespace)
    for (const stream of names.reportStreams) {
      for (const fields of entries) await admin.xadd(stream, '*', ...fields)
    }
    const expected = entries.length * names.reportStreams.length
    await until(
      'every bad entry set aside',
      async () => (await admin.xlen(names.deadLetterStream)) === expected,
      15_000,
    )
    await until('every entry acknowledged', async () => (await pendingReports(admin, names)) === 0)

    // The metric agrees with the stream, reason by reason.
    const letters = await admin.xrange(names.deadLetterStream, '-', '+')
    const reasons = new Map<string, number>()
    for (const [, fields] of letters) {
      const reason = fields[fields.indexOf('reason') + 1] as string
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    }
    expect([...reasons.keys()].sort()).toEqual(
      expect.arrayContaining(['E_FROM_THE_FUTURE', 'E_MISSING_FIELD', 'E_WINDOW_MISMATCH']),
    )
    for (const [reason, count] of reasons) {
      expect(await replica.metric('heatsink_dead_letter_total', { reason })).toBe(count)
    }
    expect(await replica.metric('heatsink_ingest_reports_total')).toBe(0)
    expect(await replica.hotKeys()).toEqual([])

    // Still counting: a valid report right after promotes its key.
    await sendReport(admin, names, makeReport('agent-1', window(), { [`${redis.namespace}:valid`]: 1500 }))
    await until('the valid report promoted', async () =>
      (await replica.hotKeys()).includes(`${redis.namespace}:valid`),
    )
    expect(replica.running).toBe(true)
    expect(await replica.status('/readyz')).toBe(200)
  }, 60_000)

  it('channels and the snapshot hash: garbage counted, forgeries refused, the agent keeps its state and the real registry', async () => {
    const { redis } = world()
    const names = createNames(redis.namespace)
    const replica = await world().startReplica({ HEATSINK_REGISTRY_KEY: REGISTRY_KEY })
    const agent = await newAgent({
      url: redis.url,
      namespace: redis.namespace,
      agentId: 'target',
      registryKey: REGISTRY_KEY,
    })
    const admin = redis.client()
    const cached = `${redis.namespace}:cached`
    await admin.set(cached, 'v1')
    expect((await replica.promote(cached, { mitigation: 'local_cache' })).status).toBe(201)
    await until('the promotion', () => agent.mitigation(cached) === 'local_cache')
    const before = agent.stats()

    const forgedEvent = (signedWith: string | null) => {
      // Well-formed and next in line: only its MAC tells it from the control plane's.
      const version = before.registryVersion + 1
      const key = `${redis.namespace}:forged`
      const text = encodeRegistryEvent({
        v: WIRE_VERSION,
        kind: 'registry',
        type: 'promote',
        version,
        at: Date.now(),
        entry: registryEntry(key, 'local_cache', version),
      })
      return signedWith === null ? text : signRegistryMessage(text, signedWith)
    }
    const garbage = [
      'garbage',
      '{}',
      '[]',
      JSON.stringify({ v: WIRE_VERSION, kind: 'promote' }),
      'x'.repeat(100_000),
    ]
    for (const message of garbage) await admin.publish(names.registryChannel, message)
    for (const message of garbage) await admin.publish(names.invalidationChannel, message)
    for (const message of garbage) await admin.publish(names.tuningChannel, message)
    // A tuning message asking every agent to report every key: well-formed, unsigned.
    const forgedTuning = encodeTuning({
      v: WIRE_VERSION,
      kind: 'tuning',
      at: Date.now(),
      activeAgents: 1,
      reportFloor: 1,
      watch: [`${redis.namespace}:forged-watch`],
      watchWindows: 3600,
    })
    await admin.publish(names.tuningChannel, forgedTuning)
    await admin.publish(names.registryChannel, forgedEvent(null))
    await admin.publish(names.registryChannel, forgedEvent('not-the-registry-key-0123456789abcdef'))
    // The stampede guard's wake-ups and Redis's own tracking channel carry bare key names: a stray one only makes
    // the agent drop or re-check a key, never serve a wrong value.
    await admin.publish(`${redis.namespace}:filled`, 'garbage')
    await admin.publish('__redis__:invalidate', 'garbage')

    await until(
      'garbage counted',
      () => agent.stats().badMessages >= before.badMessages + 3 * garbage.length + 3,
    )
    // Two registry events and one tuning message, refused for their MAC; the replica's own signed tuning applies.
    expect(agent.stats().forgedMessages).toBe(before.forgedMessages + 3)
    expect(agent.stats().reportFloor).toBeGreaterThan(1)
    expect(agent.stats().watchedKeys).toBe(before.watchedKeys)
    expect(agent.stats().registryVersion).toBe(before.registryVersion)
    expect(agent.mitigation(`${redis.namespace}:forged`)).toBeUndefined()
    expect(agent.mitigation(cached)).toBe('local_cache')
    expect(agent.stats().invalidationChannelUp).toBe(true)
    expect(await agent.get(cached)).toBe('v1')

    // The snapshot hash, overwritten with a version far ahead and a snapshot that is not one.
    await admin.hset(names.registrySnapshotKey, 'version', '999999', 'snapshot', 'garbage')
    // The replicas put back what Postgres holds (within a publish interval), so publishing never stalls on it.
    await until(
      'the hash repaired',
      async () => (await admin.hget(names.registrySnapshotKey, 'version')) === String(before.registryVersion),
      10_000,
    )
    expect(await replica.metric('heatsink_registry_snapshot_repaired_total')).toBe(1)
    expect(agent.stats().registryVersion).toBe(before.registryVersion)
    expect(agent.mitigation(cached)).toBe('local_cache')

    // The control plane carries on: the next real change reaches the agent, whatever the hash said.
    const next = `${redis.namespace}:next`
    expect((await replica.promote(next, { mitigation: 'coalesce' })).status).toBe(201)
    await until('the real promotion on the agent', () => agent.mitigation(next) === 'coalesce', 10_000)
    expect(agent.stats().registryVersion).toBe(before.registryVersion + 1)
    expect(await admin.hget(names.registrySnapshotKey, 'version')).toBe(String(before.registryVersion + 1))

    // And a version that is not a number at all.
    await admin.hset(names.registrySnapshotKey, 'version', 'abc')
    const third = `${redis.namespace}:third`
    expect((await replica.promote(third, { mitigation: 'local_cache' })).status).toBe(201)
    await until(
      'the promotion after a garbled version',
      () => agent.mitigation(third) === 'local_cache',
      10_000,
    )
    expect(await replica.metric('heatsink_registry_snapshot_repaired_total')).toBe(2)
    expect(replica.running).toBe(true)
  }, 60_000)
})
