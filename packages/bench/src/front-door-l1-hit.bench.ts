import { hrtime } from 'node:process'
import { Redis as HeatsinkRedis } from '@heatsink/agent'
import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { seededRandom } from '@heatsink/workload'
import { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { percentile } from './harness.js'
import type { ResultRow } from './results.js'
import { benchNamespace, benchRedisUrl, removeNamespace, shuffle, until } from './support.js'

const MAX_ROUNDS = Number(process.env.FRONT_DOOR_L1_HIT_ROUNDS ?? 600)
const WARMUP_ROUNDS = 20
// The run stops at MAX_ROUNDS or after this long, so that a busy machine does not stretch it.
const BUDGET_MS = Number(process.env.FRONT_DOOR_L1_HIT_BUDGET_MS ?? 30_000)
/** Sequential awaits per timed batch of an in-process read, and of a Redis round trip. */
const LOCAL_OPS = 1000
const REMOTE_OPS = 50
const HASH_FIELDS = 20

interface Subject {
  label: string
  run: () => Promise<unknown>
  ops: number
  /** Per-operation means of timed batches, in ns. */
  batchMeans: number[]
  /** Single operations timed each with performance.now(), in ns. */
  samples: number[]
}

interface Figures {
  median: number
  p99: number
  sampledMedian: number
  sampledP99: number
}

/**
 * An L1 hit through the ioredis front door: `await redis.get(key)` and `await redis.hgetall(key)` (a hash of
 * 20 fields) on local_cache keys, with enableAutoPipelining off (ioredis's default) and on, against lru-cache's
 * get wrapped in Promise.resolve (the obvious in-process cache behind a promise-returning API) and against raw
 * ioredis's round trip for the same command, all measured in the same rounds in a random order.
 *
 * Two ways of timing, both reported: batches of sequential awaits timed as a whole (hrtime) and divided, the
 * median and p99 of those batch means; and single awaits each timed with performance.now(), the median and p99
 * of all samples, which include the timer's own cost (measured in the same run and printed beside).
 */
export async function benchFrontDoorL1Hit(): Promise<ResultRow[]> {
  const url = benchRedisUrl()
  const namespace = benchNamespace('front-door-l1-hit')
  const names = createNames(namespace)
  const admin = new Redis(url)
  // The entries live their maxTtlMs (keys without a TTL): longer than the run, so every read measured is a hit.
  const heatsink = { namespace, agentId: 'bench-front-door-l1-hit', l1: { maxTtlMs: 300_000 } }
  const plain = new HeatsinkRedis(url, { heatsink })
  // Same deployment and namespace: the two clients share one process agent, so one L1.
  const piped = new HeatsinkRedis(url, { enableAutoPipelining: true, heatsink })
  const raw = new Redis(url)
  const stringKey = `${namespace}:product:42`
  const hashKey = `${namespace}:product:42:attributes`
  const text = 'a hot value of modest size, as a cache holds'
  const hash = Object.fromEntries(Array.from({ length: HASH_FIELDS }, (_, i) => [`field${i}`, `value ${i}`]))
  try {
    await admin.set(stringKey, text)
    await admin.hset(hashKey, hash)
    await Promise.all([plain.heatsink.ready(), piped.heatsink.ready()])
    await publishRegistry(admin, names, { key: stringKey }, { key: hashKey })
    await until(
      () =>
        plain.heatsink.mitigation(stringKey) === 'local_cache' &&
        plain.heatsink.mitigation(hashKey) === 'local_cache',
      'the promotion',
    )
    // A promotion fills L1 at once; wait until both keys answer from it, through both clients.
    const deadline = Date.now() + 5000
    for (;;) {
      const before = plain.heatsink.stats().l1Hits
      const replies = [
        await plain.get(stringKey),
        await plain.hgetall(hashKey),
        await piped.get(stringKey),
        await piped.hgetall(hashKey),
      ]
      if (replies[0] !== text || Object.keys(replies[1] as object).length !== HASH_FIELDS) {
        throw new Error('the Heatsink client read something else than what was written')
      }
      if (plain.heatsink.stats().l1Hits - before === replies.length) break
      if (Date.now() > deadline) throw new Error('the keys never answered from L1')
      await new Promise((resolve) => setTimeout(resolve, 5))
    }

    const lru = new LRUCache<string, string | Record<string, string>>({ max: 1024 })
    lru.set(stringKey, text)
    lru.set(hashKey, { ...hash })
    const subject = (label: string, run: () => Promise<unknown>, ops = LOCAL_OPS): Subject => ({
      label,
      run,
      ops,
      batchMeans: [],
      samples: [],
    })
    const s = {
      getOff: subject('get, autopipelining off', () => plain.get(stringKey)),
      getOn: subject('get, autopipelining on', () => piped.get(stringKey)),
      hgetallOff: subject('hgetall, autopipelining off', () => plain.hgetall(hashKey)),
      hgetallOn: subject('hgetall, autopipelining on', () => piped.hgetall(hashKey)),
      lruGet: subject('lru-cache get + Promise.resolve (string)', () => Promise.resolve(lru.get(stringKey))),
      lruHash: subject('lru-cache get + Promise.resolve (hash)', () => Promise.resolve(lru.get(hashKey))),
      rawGet: subject('raw ioredis get (round trip)', () => raw.get(stringKey), REMOTE_OPS),
      rawHgetall: subject('raw ioredis hgetall (round trip)', () => raw.hgetall(hashKey), REMOTE_OPS),
    }
    const subjects = Object.values(s)
    const heatsinkOpsPerRound = 4 * 2 * LOCAL_OPS
    const hitsBefore = plain.heatsink.stats().l1Hits
    const timerSamples: number[] = []
    const random = seededRandom(42)
    const order = [...subjects]
    const stop = performance.now() + BUDGET_MS
    let rounds = 0
    let misses = 0
    for (let round = -WARMUP_ROUNDS; round < MAX_ROUNDS; round++) {
      if (round >= 50 && performance.now() > stop) break
      const keep = round >= 0
      shuffle(order, random)
      for (const subject of order) {
        const start = hrtime.bigint()
        for (let i = 0; i < subject.ops; i++) if ((await subject.run()) == null) misses++
        const mean = Number(hrtime.bigint() - start) / subject.ops
        if (keep) subject.batchMeans.push(mean)
      }
      shuffle(order, random)
      for (const subject of order) {
        for (let i = 0; i < subject.ops; i++) {
          const start = performance.now()
          if ((await subject.run()) == null) misses++
          const took = performance.now() - start
          if (keep) subject.samples.push(took * 1e6)
        }
      }
      for (let i = 0; i < LOCAL_OPS; i++) {
        const start = performance.now()
        const took = performance.now() - start
        if (keep) timerSamples.push(took * 1e6)
      }
      if (keep) rounds++
    }
    if (misses !== 0) throw new Error(`${misses} reads answered nothing`)
    const hits = plain.heatsink.stats().l1Hits - hitsBefore
    const expected = (rounds + WARMUP_ROUNDS) * heatsinkOpsPerRound
    if (hits < expected) throw new Error(`only ${hits} of ${expected} reads through Heatsink were L1 hits`)

    const f = Object.fromEntries(Object.entries(s).map(([name, sub]) => [name, figures(sub)])) as Record<
      keyof typeof s,
      Figures
    >
    const timer = sortedCopy(timerSamples)
    const timerMedian = percentile(timer, 0.5)
    const timerP99 = percentile(timer, 0.99)
    console.log(
      `front-door-l1-hit: ${rounds} rounds; batch means over ${LOCAL_OPS} awaits (${REMOTE_OPS} for round trips), ` +
        `and single awaits timed with performance.now() (timer alone: median ${ns(timerMedian)}, p99 ` +
        `${ns(timerP99)}, included in the per-op figures)`,
    )
    console.log(
      `  ${'operation'.padEnd(42)} ${'median'.padStart(9)} ${'p99'.padStart(9)} ${'per-op p50'.padStart(11)} ` +
        `${'per-op p99'.padStart(11)}`,
    )
    for (const [name, sub] of Object.entries(s)) {
      const x = f[name as keyof typeof s]
      const label = name.startsWith('raw') || name.startsWith('lru') ? sub.label : `Heatsink ${sub.label}`
      console.log(
        `  ${label.padEnd(42)} ${ns(x.median).padStart(9)} ${ns(x.p99).padStart(9)} ` +
          `${ns(x.sampledMedian).padStart(11)} ${ns(x.sampledP99).padStart(11)}`,
      )
    }

    const aims = (x: Figures) =>
      `aim median <= 1 µs: ${x.median <= 1000 ? 'met' : 'missed'}; aim p99 <= 5 µs: batch means ` +
      `${x.p99 <= 5000 ? 'met' : 'missed'}, per-op ${x.sampledP99 <= 5000 ? 'met' : 'missed'}`
    const l1Row = (command: string, pipelining: string, x: Figures, baseline: Figures): ResultRow => ({
      benchmark: `front door L1 hit: await redis.${command}(key), autopipelining ${pipelining}`,
      heatsink: describe(x),
      baseline: `lru-cache get + Promise.resolve (${command === 'get' ? 'string' : '20-field hash object'})`,
      baselineFigure: describe(baseline),
      ratio: x.median / baseline.median,
      note:
        `median per awaited call, Heatsink / lru-cache; ${aims(x)}; per-op figures include the timer ` +
        `(${ns(timerMedian)} median)`,
    })
    const roundTripRow = (command: string, x: Figures, baseline: Figures): ResultRow => ({
      benchmark: `front door L1 hit vs a Redis round trip: await redis.${command}(key)`,
      heatsink: `${ns(x.median)} median, ${ns(x.p99)} p99 (autopipelining off)`,
      baseline: `raw ioredis ${command}, a loopback round trip`,
      baselineFigure: `${ns(baseline.median)} median, ${ns(baseline.p99)} p99 (batch means)`,
      ratio: x.median / baseline.median,
      note:
        `median per awaited call, L1 hit / round trip (the share of a read L1 leaves): the hit is ` +
        `${Math.round(baseline.median / x.median)}x faster`,
    })
    return [
      l1Row('get', 'off', f.getOff, f.lruGet),
      l1Row('get', 'on', f.getOn, f.lruGet),
      l1Row('hgetall', 'off', f.hgetallOff, f.lruHash),
      l1Row('hgetall', 'on', f.hgetallOn, f.lruHash),
      roundTripRow('get', f.getOff, f.rawGet),
      roundTripRow('hgetall', f.hgetallOff, f.rawHgetall),
    ]
  } finally {
    // Closing Heatsink first waits for the process agent to close (its last report included) before cleanup.
    for (const client of [plain, piped]) await client.heatsink.close()
    await Promise.all([plain.quit().catch(() => {}), piped.quit().catch(() => {})])
    await removeNamespace(admin, namespace)
    for (const connection of [admin, raw]) connection.disconnect()
  }
}

function figures(subject: Subject): Figures {
  const means = sortedCopy(subject.batchMeans)
  const samples = sortedCopy(subject.samples)
  return {
    median: percentile(means, 0.5),
    p99: percentile(means, 0.99),
    sampledMedian: percentile(samples, 0.5),
    sampledP99: percentile(samples, 0.99),
  }
}

function describe(x: Figures): string {
  return (
    `${ns(x.median)} median, ${ns(x.p99)} p99 (batch means); per-op ${ns(x.sampledMedian)} median, ` +
    `${ns(x.sampledP99)} p99`
  )
}

function sortedCopy(values: number[]): Float64Array {
  return Float64Array.from(values).sort()
}

function ns(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} µs` : `${Math.round(value)} ns`
}
