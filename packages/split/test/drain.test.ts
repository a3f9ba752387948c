import { ManualClock } from '@heatsink/sketch'
import type { Redis } from 'ioredis'
import { expect, it } from 'vitest'
import { createContext } from '../src/context.js'
import { script } from '../src/fan-out.js'
import { decodeGate } from '../src/gate.js'
import { collectJournal, finishMove, parseJournal } from '../src/journal.js'
import { Lease } from '../src/lease.js'
import { describeTargets, type SplitTarget } from './support/targets.js'

// Each shard i of 8 holds 10 * (i + 1): 360 in all, over a base of 1000.
const TOTAL = '1360'

// One counter split 8 ways, and the steps of one drain of its shard 0, driven by hand as an agent that dies part
// way would leave them.
async function setUp(t: SplitTarget) {
  const key = `${t.namespace}:hits`
  const plain = await t.client()
  const splitter = await t.splitter('reader')
  await plain.set(key, '1000')
  const layout = splitter.layout(key, 8)
  for (const shard of layout.shards) await plain.set(shard.data, String(10 * (shard.index + 1)))
  const ctx = createContext({ redis: await t.client(), names: t.names, agentId: 'crashing' })
  const lease = (await Lease.tryAcquire(ctx, t.names.splitLeaseKey(key), 10_000))!
  const shard = layout.shards[0]!
  const journalKey = t.names.splitJournalKey(key)
  const steps = {
    seal: () => ctx.fanOut.one(script('sealShard', [shard.data, shard.gate], 1)),
    apply: () => ctx.fanOut.one(script('applyCounterMove', [key, journalKey], '8:0:1', '10', Date.now())),
    finish: () => ctx.fanOut.one(script('finishShard', [shard.data, shard.gate], 1, 'merged', 60_000, '10')),
    markFinished: () => finishMove(ctx, key, '8:0:1'),
  }
  return { t, key, plain, splitter, shard, lease, steps, journalKey }
}

describeTargets('counter drain steps', (target) => {
  it('reads the same sum at every step of a drain', async () => {
    const { key, plain, splitter, lease, steps, journalKey } = await setUp(target())
    expect(await splitter.get(key, 8)).toBe(TOTAL)
    await steps.seal()
    expect(await splitter.get(key, 8)).toBe(TOTAL)
    await steps.apply()
    // The base key holds the 10 now and the shard still does: the journal entry tells the reader.
    expect(await splitter.get(key, 8)).toBe(TOTAL)
    await steps.finish()
    expect(await splitter.get(key, 8)).toBe(TOTAL)
    await steps.markFinished()
    expect(parseJournal(await plain.get(journalKey)).get('8:0:1')?.finishedAt).toBeGreaterThan(0)
    expect(await splitter.get(key, 8)).toBe(TOTAL)
    await lease.release()
  })

  it('resumes a drain whose agent died after moving the value and before deleting the shard, without doubling it', async () => {
    const { key, plain, splitter, lease, steps } = await setUp(target())
    await steps.seal()
    await steps.apply()
    // The agent dies: its lease expires (here: released), the shard stays sealed, the move is journalled.
    await lease.release()
    expect(await splitter.get(key, 8)).toBe(TOTAL)
    const report = await splitter.fold(key, 8)
    expect(report.moved).toBe('350')
    expect(await plain.get(key)).toBe(TOTAL)
    expect(await splitter.get(key, 8)).toBe(TOTAL)
  })

  it('collects the journal in two steps a grace period apart, keeping the sum exact throughout', async () => {
    const t = target()
    const key = `${t.namespace}:collected`
    const splitter = await t.splitter('agent-a')
    for (let i = 0; i < 64; i++) await splitter.add(key, 4, 1)
    await splitter.fold(key, 4)
    const plain = await t.client()
    const journalKey = t.names.splitJournalKey(key)
    const clock = new ManualClock(Date.now())
    const settings = { clock, journalGraceMs: 1000, sealTtlMs: 60_000 }
    const ctx = createContext({ redis: plain, names: t.names, agentId: 'collector', ...settings })
    const movedOf = () =>
      Promise.all(
        splitter
          .layout(key, 4)
          .shards.map(async (shard) => decodeGate(await plain.get(shard.gate)).moved ?? null),
      )
    expect(parseJournal(await plain.get(journalKey)).size).toBe(4)
    expect(await collectJournal(ctx, key)).toBe(0)
    expect((await movedOf()).every((moved) => moved !== null)).toBe(true)
    clock.advance(1001)
    // Step 1: the gates forget the moves; the entries stay, marked.
    expect(await collectJournal(ctx, key)).toBe(0)
    expect(await movedOf()).toEqual([null, null, null, null])
    expect(parseJournal(await plain.get(journalKey)).size).toBe(4)
    expect(await splitter.get(key, 4)).toBe('64')
    clock.advance(1001)
    // Step 2: the entries go.
    expect(await collectJournal(ctx, key)).toBe(4)
    expect(await plain.exists(journalKey)).toBe(0)
    expect(await splitter.get(key, 4)).toBe('64')
    expect(await plain.get(key)).toBe('64')
  })

  it('has the folding agent collect its journal by itself', async () => {
    const t = target()
    const key = `${t.namespace}:self-collected`
    const clock = new ManualClock(Date.now())
    const splitter = await t.splitter('agent-a', { clock, journalGraceMs: 1000, sealTtlMs: 60_000 })
    for (let i = 0; i < 64; i++) await splitter.add(key, 4, 1)
    await splitter.fold(key, 4)
    const plain = await t.client()
    const journalKey = t.names.splitJournalKey(key)
    expect(parseJournal(await plain.get(journalKey)).size).toBe(4)
    clock.advance(1001)
    await expect
      .poll(async () =>
        [...parseJournal(await plain.get(journalKey)).values()].every(
          (entry) => entry.clearedAt !== undefined,
        ),
      )
      .toBe(true)
    clock.advance(1001)
    await expect.poll(() => plain.exists(journalKey)).toBe(0)
    expect(await plain.get(key)).toBe('64')
  })
})

// Only a Cluster reads base key and shards at different moments (on different nodes): a standalone Redis reads
// them in one MGET, one snapshot, in which neither of these states can appear.
describeTargets(
  'counter reads straddling a drain',
  (target) => {
    it('reads the same sum when its shard read came before the seal and its base read after the move', async () => {
      const { key, plain, splitter, shard, lease, steps } = await setUp(target())
      await steps.seal()
      await steps.apply()
      // What a read sees when its shard read came before the seal: the gate as it was then, the value still there.
      await plain.del(shard.gate)
      expect(await splitter.get(key, 8)).toBe(TOTAL)
      await lease.release()
    })

    it('reads the same sum when its base read came before the move and its shard read after the shard was deleted', async () => {
      const { key, plain, splitter, lease, steps, journalKey } = await setUp(target())
      await steps.seal()
      await steps.apply()
      await steps.finish()
      // What a read sees when its base read came first: no journal entry, the base key without the 10.
      await plain.del(journalKey)
      await plain.decrby(key, 10)
      expect(await splitter.get(key, 8)).toBe(TOTAL)
      await lease.release()
    })
  },
  ['cluster'],
)

// On a standalone Redis a counter read is one MGET: the gates come into it only while a drain is unfinished.
describeTargets(
  'counter snapshot reads',
  (target) => {
    it("answers counter commands sent in order (the data plane's) exactly at every step of a drain", async () => {
      const { key, splitter, lease, steps } = await setUp(target())
      let expected = BigInt(TOTAL)
      expect(await splitter.counterSnapshotInOrder(key, 8)).toBe(expected)
      // Writes start once the shard is sealed: the drain's amounts are the shard's value before it (the steps are
      // driven by hand). A write meeting the sealed gate goes to the base key.
      for (const step of [steps.seal, steps.apply, steps.finish, steps.markFinished]) {
        await step()
        // The snapshot read declines while the move is unfinished; the read with the gates sums every step.
        expect([expected, undefined]).toContain(await splitter.counterSnapshotInOrder(key, 8))
        expect(await splitter.counterGatedRead(key, 8)).toBe(expected)
        expected += 5n
        expect(await splitter.counterInOrder(key, 8, '5')).toBe(expected)
      }
      await lease.release()
    })

    it('reads a counter with no drain under way in one MGET of base key, journal, routes and shards, no gate', async () => {
      const { t, key, plain, splitter, shard, lease, steps } = await setUp(target())
      const monitor = await (t.client() as Promise<Redis>).then((client) => client.monitor())
      const seen: string[][] = []
      monitor.on('monitor', (_time: string, args: string[]) => seen.push(args))
      // The MGETs one read sent: MONITOR lists commands in order, so once an ECHO sent after the read shows up,
      // every command of the read has.
      const mgetsOfOneRead = async () => {
        const marker = `${key}:read-${seen.length}`
        expect(await splitter.get(key, 8)).toBe(TOTAL)
        await plain.echo(marker)
        await expect.poll(() => seen.some((args) => args[1] === marker)).toBe(true)
        const read = seen.splice(0).filter((args) => args[0]?.toLowerCase() === 'mget' && args[1] === key)
        return read.map((args) => args.slice(1))
      }
      const steady = await mgetsOfOneRead()
      expect(steady).toHaveLength(1)
      expect(steady[0]).toHaveLength(11)
      expect(steady[0]).toContain(shard.data)
      expect(steady[0]).not.toContain(shard.gate)
      await steps.seal()
      await steps.apply()
      await steps.finish()
      // The move is in the base key and the shard gone, but the journal does not say so yet: the gates decide.
      const unfinished = await mgetsOfOneRead()
      expect(unfinished).toHaveLength(2)
      expect(unfinished[1]).toContain(shard.gate)
      await steps.markFinished()
      const finished = await mgetsOfOneRead()
      expect(finished).toHaveLength(1)
      expect(finished[0]).not.toContain(shard.gate)
      monitor.disconnect()
      await lease.release()
    })
  },
  ['redis'],
)
