import { ManualClock } from '@heatsink/sketch'
import { expect, it } from 'vitest'
import { createContext } from '../src/context.js'
import { script } from '../src/fan-out.js'
import { decodeGate } from '../src/gate.js'
import type { ReconcileReport, Splitter } from '../src/index.js'
import { deferred } from './support/deferred.js'
import { describeTargets } from './support/targets.js'

describeTargets('reconciler', (target) => {
  it('runs on one agent at a time, under a lease', async () => {
    const t = target()
    const [a, b] = await t.splitters(['a', 'b'])
    const keys = () => []
    const first = a.reconciler({ intervalMs: 1000, keys })
    const second = b.reconciler({ intervalMs: 1000, keys })
    const reports = await Promise.all([first.runOnce(), second.runOnce()])
    expect(reports.filter((report) => report.leader)).toHaveLength(1)
    const [leader, other] = reports[0]!.leader ? [first, second] : [second, first]
    expect((await leader.runOnce()).leader).toBe(true)
    expect((await other.runOnce()).leader).toBe(false)
    // Stopping releases the lease (compare and delete), so the other takes over at its next pass.
    await leader.stop()
    expect((await other.runOnce()).leader).toBe(true)
    await other.stop()
  })

  it('moves counter shards into the base key without changing the sum, while writers keep writing', async () => {
    const t = target()
    const key = `${t.namespace}:likes`
    const plain = await t.client()
    await plain.set(key, '7')
    const [reconciling, ...writers] = await t.splitters(['a', 'b', 'c'])
    const reconciler = reconciling.reconciler({ intervalMs: 1000, keys: () => [{ key, n: 8 }] })
    let acknowledged = 0
    let done = false
    const writing = writers.flatMap((splitter) =>
      Array.from({ length: 4 }, async () => {
        while (!done) {
          await splitter.add(key, 8, 1)
          acknowledged++
        }
      }),
    )
    const reports: ReconcileReport[] = []
    for (let pass = 0; pass < 5; pass++) {
      const low = acknowledged
      reports.push(await reconciler.runOnce())
      expect(Number(await reconciling.get(key, 8))).toBeGreaterThanOrEqual(7 + low)
    }
    done = true
    await Promise.all(writing)
    await reconciler.stop()
    expect(reports.every((report) => report.leader)).toBe(true)
    // One shard per key and pass: the one that drifted furthest.
    expect(reports.map((report) => report.rebalanced)).toEqual([1, 1, 1, 1, 1])
    expect(Number(await reconciling.get(key, 8))).toBe(7 + acknowledged)
    // The bulk sits in the base key now; the shards hold only what arrived since the last pass.
    expect(Number(await plain.get(key))).toBeGreaterThan(7)
  })

  it('finishes a drain left sealed by a dead agent, and reopens gates a past fold closed', async () => {
    const t = target()
    const key = `${t.namespace}:orphaned`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    for (let i = 0; i < 80; i++) await splitter.add(key, 4, 1)
    const [sealed, closed] = splitter.layout(key, 4).shards
    // A dead agent's drain: sealed and moved, never finished.
    const ctx = createContext({ redis: await t.client(), names: t.names, agentId: 'dead' })
    await ctx.fanOut.one(script('sealShard', [sealed!.data, sealed!.gate], 1))
    const value = (await plain.get(sealed!.data)) ?? '0'
    await ctx.fanOut.one(
      script('applyCounterMove', [key, t.names.splitJournalKey(key)], '4:0:1', value, Date.now()),
    )
    // A gate a past fold left closed.
    await plain.set(closed!.gate, 'merged:1:0:')
    expect(await splitter.get(key, 4)).toBe('80')
    const report = await splitter.reconciler({ intervalMs: 1000, keys: () => [{ key, n: 4 }] }).runOnce()
    expect(report).toMatchObject({ leader: true, resumed: 1, reopened: 1 })
    expect(await splitter.get(key, 4)).toBe('80')
    expect(decodeGate(await plain.get(sealed!.gate)).state).toBeUndefined()
    expect(decodeGate(await plain.get(closed!.gate)).state).toBeUndefined()
    await splitter.reconciler({ intervalMs: 1000, keys: () => [] }).stop()
  })

  it('drains strays that reach a folded layout (a stale re-activation), keeping newer base scores', async () => {
    const t = target()
    const key = `${t.namespace}:stray`
    const board = `${t.namespace}:board`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    await splitter.add(key, 8, 5)
    await splitter.zadd(board, 8, 1, 'alice')
    await splitter.fold(key, 8)
    await splitter.fold(board, 8)
    // An agent replays an old promotion: the gates reopen and writes land in the shards again.
    await splitter.activate(key, 8)
    await splitter.activate(board, 8)
    for (let i = 0; i < 10; i++) await splitter.add(key, 8, 1)
    await splitter.zadd(board, 8, 2, 'alice', 3, 'bob')
    await plain.zadd(board, 9, 'alice')
    const report = await splitter.reconciler({ intervalMs: 1000, keys: () => [] }).runOnce()
    expect(report.strays).toBeGreaterThan(0)
    expect(await plain.get(key)).toBe('15')
    expect(await plain.zrange(board, 0, -1, 'WITHSCORES')).toEqual(['bob', '3', 'alice', '9'])
    for (const shard of splitter.layout(key, 8).shards) expect(await plain.exists(shard.data)).toBe(0)
  })

  it('runs its passes on its own timer and stops cleanly', async () => {
    const t = target()
    const key = `${t.namespace}:timed`
    const clock = new ManualClock(Date.now())
    const splitter: Splitter = await t.splitter('agent-a', { clock })
    for (let i = 0; i < 20; i++) await splitter.add(key, 4, 1)
    const passed = deferred<ReconcileReport>()
    const reconciler = splitter.startReconciler({
      intervalMs: 5000,
      keys: () => [{ key, n: 4 }],
      onPass: (report) => passed.resolve(report),
    })
    clock.advance(5000)
    const report = await passed.promise
    expect(report.leader).toBe(true)
    expect(report.rebalanced).toBe(1)
    await reconciler.stop()
    expect(clock.pending).toBe(0)
    const plain = await t.client()
    const shards = await Promise.all(splitter.layout(key, 4).shards.map((shard) => plain.get(shard.data)))
    // The furthest-drifted shard is now in the base key, and no other shard holds more than it did.
    expect(Number(await plain.get(key))).toBe(Number(report.moved))
    for (const value of shards) expect(Number(value ?? 0)).toBeLessThanOrEqual(Number(report.moved))
    expect(await splitter.get(key, 4)).toBe('20')
  })
})
