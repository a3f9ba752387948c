import { expect, it } from 'vitest'
import type { Splitter } from '../src/index.js'
import { deferred } from './support/deferred.js'
import { describeTargets } from './support/targets.js'

/** Runs `write` in `workers` loops until `until` resolves, then for `extra` more rounds each; resolves to writes done. */
async function writeUntil(
  until: Promise<unknown>,
  workers: number,
  extra: number,
  write: (worker: number, i: number) => Promise<unknown>,
): Promise<number> {
  let stop = false
  until.then(() => {
    stop = true
  })
  const counts = await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      let i = 0
      while (!stop) await write(worker, i++)
      for (let more = 0; more < extra; more++) await write(worker, i++)
      return i
    }),
  )
  return counts.reduce((sum, count) => sum + count, 0)
}

async function shardsAreEmpty(
  splitter: Splitter,
  key: string,
  n: number,
  exists: (name: string) => Promise<number>,
) {
  for (const shard of splitter.layout(key, n).shards) expect(await exists(shard.data)).toBe(0)
}

describeTargets('fold', (target) => {
  it('folds a counter back into its key under concurrent writers, lagging ones included: nothing lost or doubled', async () => {
    const t = target()
    const key = `${t.namespace}:likes`
    const plain = await t.client()
    await plain.set(key, '500')
    const [folder, ...writers] = await t.splitters(['a', 'b', 'c', 'd'])
    const started = deferred()
    let acknowledged = 0
    let issued = 0
    const write = (splitter: Splitter, n: number) => async () => {
      issued++
      await splitter.add(key, n, 1)
      acknowledged++
      if (acknowledged === 300) started.resolve()
    }
    const folded = deferred()
    let writersDone = false
    // A reader that still sees the key split checks every read against the writes around it: the fold must never
    // show a value below what was acknowledged before the read began, or above what had been sent when it ended.
    const readsChecked = (async () => {
      let reads = 0
      while (!writersDone || reads < 20) {
        const low = acknowledged
        const value = Number(await writers[0]!.get(key, 8))
        const high = issued
        expect(value).toBeGreaterThanOrEqual(500 + low)
        expect(value).toBeLessThanOrEqual(500 + high)
        reads++
      }
      return reads
    })()
    const writing = Promise.all(
      writers.map((splitter) => writeUntil(folded.promise, 8, 40, write(splitter, 8))),
    )
    await started.promise
    const report = await folder.fold(key, 8)
    folded.resolve()
    expect(report.drained).toBeGreaterThan(0)
    // The writers kept writing to the shards after the fold (their registry view lags); the closed gates sent
    // those writes to the base key. Now they catch up: some through the splitter with n = 1, some straight to Redis.
    await writing
    const direct = async () => {
      issued++
      await plain.incr(key)
      acknowledged++
    }
    await Promise.all([
      ...Array.from({ length: 50 }, write(writers[1]!, 1)),
      ...Array.from({ length: 50 }, direct),
    ])
    writersDone = true
    expect(await readsChecked).toBeGreaterThanOrEqual(20)
    expect(Number(await plain.get(key))).toBe(500 + acknowledged)
    expect(acknowledged).toBe(issued)
    await shardsAreEmpty(folder, key, 8, (name) => plain.exists(name))
    expect(await writers[2]!.get(key, 8)).toBe(String(500 + acknowledged))
  }, 60_000)

  it('folds a set under concurrent adds and removes, lagging writers included', async () => {
    const t = target()
    const key = `${t.namespace}:members`
    const plain = await t.client()
    await plain.sadd(key, 'before-1', 'before-2', 'doomed-before')
    const [folder, adder, remover, late] = await t.splitters(['a', 'b', 'c', 'd'])
    const added: string[] = []
    const removed = new Set<string>()
    const started = deferred()
    const folded = deferred()
    const adding = writeUntil(folded.promise, 4, 30, async (worker, i) => {
      const member = `w${worker}:${i}`
      await adder.sadd(key, 8, member)
      added.push(member)
      if (added.length === 100) started.resolve()
    })
    // Removes members whose add was acknowledged, while the fold runs and after it, still using n = 8.
    const removing = (async () => {
      await started.promise
      await remover.srem(key, 8, 'doomed-before')
      removed.add('doomed-before')
      for (let i = 0; i < 60; i++) {
        const member = added[i * 2]!
        await remover.srem(key, 8, member)
        removed.add(member)
      }
    })()
    await started.promise
    await folder.fold(key, 8)
    folded.resolve()
    await Promise.all([adding, removing])
    await late.sadd(key, 8, 'after-lagging')
    await late.sadd(key, 1, 'after-updated')
    const expected = new Set([...added, 'before-1', 'before-2', 'after-lagging', 'after-updated'])
    for (const member of removed) expected.delete(member)
    expect(new Set(await plain.smembers(key))).toEqual(expected)
    expect(new Set(await late.smembers(key, 8))).toEqual(expected)
    await shardsAreEmpty(folder, key, 8, (name) => plain.exists(name))
  }, 60_000)

  it('folds a sorted set under concurrent score updates: every member keeps its last acknowledged score', async () => {
    const t = target()
    const key = `${t.namespace}:board`
    const plain = await t.client()
    await plain.zadd(key, 1, 'p0', 1, 'p1', 1, 'untouched')
    const [folder, ...writers] = await t.splitters(['a', 'b', 'c'])
    // Each member has one writer, so its last acknowledged score is known; scores go down as well as up.
    const last = new Map<string, number>([
      ['p0', 1],
      ['p1', 1],
      ['untouched', 1],
    ])
    const started = deferred()
    const folded = deferred()
    let writes = 0
    const writing = Promise.all(
      writers.map((splitter, w) =>
        writeUntil(folded.promise, 3, 25, async (worker, i) => {
          const member = `p${(w * 3 + worker) % 6}`
          const score = (i * 7919) % 1000
          // One writer per member at a time: members are split between (writer, worker) pairs.
          await splitter.zadd(key, 8, score, member)
          last.set(member, score)
          if (++writes === 60) started.resolve()
        }),
      ),
    )
    await started.promise
    await folder.fold(key, 8)
    folded.resolve()
    await writing
    const expected = [...last]
      .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
      .flatMap(([m, s]) => [m, String(s)])
    expect(await plain.zrange(key, 0, -1, 'WITHSCORES')).toEqual(expected)
    await shardsAreEmpty(folder, key, 8, (name) => plain.exists(name))
  }, 60_000)

  it('lets every agent call fold on demotion: the first drains, the others wait and find it done', async () => {
    const t = target()
    const key = `${t.namespace}:shared`
    const agents = await t.splitters(['a', 'b', 'c', 'd'])
    for (let i = 0; i < 200; i++) await agents[i % 4]!.add(key, 8, 1)
    const reports = await Promise.all(agents.map((splitter) => splitter.fold(key, 8)))
    const plain = await t.client()
    expect(await plain.get(key)).toBe('200')
    expect(reports.reduce((sum, report) => sum + report.drained, 0)).toBe(8)
    expect(reports.reduce((sum, report) => sum + Number(report.moved), 0)).toBe(200)
  })

  it('folds copies: the base key already holds the value; lagging writers are sent to it', async () => {
    const t = target()
    const key = `${t.namespace}:config`
    const plain = await t.client()
    const [folder, lagging] = await t.splitters(['a', 'b'])
    await lagging.setCopies(key, 4, 'v1')
    await folder.fold(key, 4)
    await shardsAreEmpty(folder, key, 4, (name) => plain.exists(name))
    expect(await plain.get(key)).toBe('v1')
    await lagging.setCopies(key, 4, 'v2')
    expect(await plain.get(key)).toBe('v2')
    expect(await lagging.getCopy(key, 4, 'user-1')).toBe('v2')
    await shardsAreEmpty(folder, key, 4, (name) => plain.exists(name))
  })

  it('reopens a folded layout when the key is split again', async () => {
    const t = target()
    const key = `${t.namespace}:again`
    const plain = await t.client()
    const splitter = await t.splitter('agent-a')
    await splitter.add(key, 4, 5)
    await splitter.fold(key, 4)
    await splitter.add(key, 4, 1)
    expect(await plain.get(key)).toBe('6')
    await splitter.activate(key, 4)
    for (let i = 0; i < 20; i++) await splitter.add(key, 4, 1)
    expect(await plain.get(key)).toBe('6')
    expect(await splitter.get(key, 4)).toBe('26')
  })
})
