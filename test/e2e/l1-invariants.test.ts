import { demoteRegistry, publishRegistry } from '@heatsink/agent/testing'
import { createNames, type Mitigation } from '@heatsink/protocol'
import { testNamespace, usePrivateRedis } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { startMonitor, waitFor } from '../../packages/agent/test/support/helpers.js'
import { type FrontDoor, frontDoors } from './support/l1-front-doors.js'
import { allowedRefills, type KeyHistory, type RefillRules } from './support/l1-refill-rules.js'

// The L1 invariants, counted at Redis: a local_cache key's reads reach Redis at most once per process per L1
// lifetime and once per invalidation, however many readers, through whichever front door, whatever the TTL; and a
// registry change for other keys costs it nothing. Reads are counted by MONITOR on a private server, per key.
const redis = usePrivateRedis()

// A 1 s cap, so that keys without TTL live several lifetimes within a run; the default fraction.
const RULES: RefillRules = { ttlFraction: 0.2, maxTtlMs: 1000 }
const READ_MS = 3500
const READERS = [1, 16, 256]
/** Slack over the rules' count: timers on a loaded machine, and a fill that a write voids in flight. */
const SLACK = 1.2
const CHURN_EVERY_MS = 200
const CHURNED: Mitigation[] = ['local_cache', 'coalesce', 'split']

interface Scenario {
  name: string
  ttlMs: number | undefined
  /** How often the key is written again (with the same TTL); undefined: written once, before the reads. */
  rewriteEveryMs: number | undefined
}

// The rules allow, over READ_MS (3.5 s): no TTL, one fill per maxTtlMs less the refresh's 50 ms lead: 4. A 3 s TTL
// written every second: a write's fill lives 0.2 x 3000 = 600 ms, refreshed at 550 ms for 600 ms more, past the next
// write: 2 per write, 8. A 1 s TTL written as it expires: 200 ms lifetimes refreshed 20 ms early, the last one cut
// to the key's expiry, 6 per write (7 when the write comes just after the expiry, whose absence is then cached until
// the write), 22-24. Without the kept lifetime (a fifth of what is left at each refill) that last case was about
// 60. allowedRefills works them out from the writes the run made.
const SCENARIOS: Scenario[] = [
  { name: 'no TTL', ttlMs: undefined, rewriteEveryMs: undefined },
  { name: 'a 3 s TTL rewritten every second', ttlMs: 3000, rewriteEveryMs: 1000 },
  { name: 'a 1 s TTL rewritten as it expires', ttlMs: 1000, rewriteEveryMs: 1000 },
]

const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

describe('a local_cache key read by 1, 16 and 256 readers at once, through every front door', () => {
  for (const churn of [false, true]) {
    for (const scenario of SCENARIOS) {
      const title = `${scenario.name}${churn ? `, other keys promoted and demoted every ${CHURN_EVERY_MS} ms` : ''}`
      it(`(${title}) reaches Redis no more than the L1 rules allow`, async () => {
        const namespace = testNamespace()
        const names = createNames(namespace)
        const admin = new Redis(redis().url)
        open.push({ close: () => admin.quit() })
        const doors = await frontDoors(redis().url, { namespace, l1: RULES })
        for (const door of doors) open.push(door)
        const hotKeys = doors.flatMap((door) =>
          READERS.map((readers) => ({ door, readers, key: `${namespace}:hot:${door.name}:${readers}` })),
        )
        const history: KeyHistory = { writes: [], ttlMs: scenario.ttlMs }
        const write = async () => {
          const pipeline = admin.pipeline()
          for (const { key } of hotKeys) {
            if (scenario.ttlMs === undefined) pipeline.set(key, 'v')
            else pipeline.set(key, `v${history.writes.length}`, 'PX', scenario.ttlMs)
          }
          const sent = performance.now()
          await pipeline.exec()
          ;(history.writes as number[]).push(sent)
        }
        await write()
        await publishRegistry(admin, names, ...hotKeys.map(({ key }) => ({ key })))
        await waitFor(
          () => hotKeys.every(({ door, key }) => door.mitigation(key) === 'local_cache'),
          'the promotions',
          5000,
        )
        const monitor = await startMonitor(redis().url)
        open.push({ close: () => monitor.stop() })

        const from = performance.now()
        const until = from + READ_MS
        const running: Array<Promise<unknown>> = []
        if (scenario.rewriteEveryMs !== undefined)
          running.push(rewrite(write, scenario.rewriteEveryMs, until))
        if (churn) running.push(churnRegistry(admin, namespace, doors, until))
        // Keys without TTL or writes: after the first fill, only an expiry could make a read wait on Redis.
        const gaps =
          scenario.rewriteEveryMs === undefined && !churn ? missesAfterFirstFill(doors, until) : undefined
        const reads = await Promise.all(
          hotKeys.map(({ door, readers, key }) => readConcurrently(() => door.read(key), readers, until)),
        )
        await Promise.all(running)
        await monitor.sync()

        const allowed = allowedRefills(RULES, history, from, until)
        const counted = hotKeys.map(({ door, readers, key }, i) => ({
          door: door.name,
          readers,
          reads: reads[i],
          allowed,
          atRedis: monitor.count('get', key),
        }))
        console.log(`${title}:\n${counted.map((row) => JSON.stringify(row)).join('\n')}`)
        for (const row of counted) {
          expect(row.reads, `${row.door} x${row.readers} read`).toBeGreaterThanOrEqual(row.readers)
          expect(row.atRedis, `${row.door} x${row.readers} at Redis`).toBeLessThanOrEqual(SLACK * allowed)
        }
        if (gaps !== undefined) {
          // Refilled ahead of expiry while read: expiry opens no gap in which reads wait on Redis. createAgent's
          // get still has the L1 of its own (l1-cache.ts), which refills on the first read after the expiry.
          const waited = await gaps
          console.log(`reads that waited on a fill after the first: ${JSON.stringify(waited)}`)
          expect(waited.filter(({ door }) => door !== 'createAgent')).toEqual([
            { door: 'drop-in', waited: 0 },
            { door: 'proxy', waited: 0 },
          ])
        }
      }, 30_000)
    }
  }
})

/** `readers` loops reading until `until`, each yielding to the event loop between reads; the reads made. */
async function readConcurrently(
  read: () => Promise<unknown>,
  readers: number,
  until: number,
): Promise<number> {
  let reads = 0
  await Promise.all(
    Array.from({ length: readers }, async () => {
      while (performance.now() < until) {
        await read()
        reads++
        await new Promise(setImmediate)
      }
    }),
  )
  return reads
}

/** The L1 misses of each door from a while after the first fills (1.2 s: past the first expiry) until `until`. */
async function missesAfterFirstFill(
  doors: FrontDoor[],
  until: number,
): Promise<Array<{ door: string; waited: number }>> {
  await sleep(1200)
  const before = doors.map((door) => door.l1Misses())
  await sleep(until - performance.now())
  return doors.map((door, i) => ({ door: door.name, waited: door.l1Misses() - (before[i] ?? 0) }))
}

/** Writes the keys now and every `everyMs` until `until`, on a schedule that does not drift. */
async function rewrite(write: () => Promise<void>, everyMs: number, until: number): Promise<void> {
  const start = performance.now()
  for (let n = 0; start + n * everyMs < until; n++) {
    await sleep(start + n * everyMs - performance.now())
    await write()
  }
}

/**
 * Every CHURN_EVERY_MS, the next of three other keys (local_cache, coalesce, split) is promoted or demoted, and
 * every front door reads it once after a promotion, so that its demotion has an entry or a flight to undo.
 */
async function churnRegistry(
  admin: Redis,
  namespace: string,
  doors: FrontDoor[],
  until: number,
): Promise<void> {
  const names = createNames(namespace)
  const promoted = new Set<string>()
  for (let round = 0; performance.now() < until; round++) {
    const mitigation = CHURNED[round % CHURNED.length] as Mitigation
    const key = `${namespace}:churn:${mitigation}`
    if (promoted.delete(key)) {
      await demoteRegistry(admin, names, key)
    } else {
      await admin.set(key, '1')
      await publishRegistry(admin, names, { key, mitigation, splitFactor: 4 })
      promoted.add(key)
      await Promise.all(doors.map((door) => door.read(key)))
    }
    await sleep(CHURN_EVERY_MS)
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))
}
