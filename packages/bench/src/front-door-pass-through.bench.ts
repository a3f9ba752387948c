import { Redis as HeatsinkRedis } from '@heatsink/agent'
import { keyNames, seededRandom } from '@heatsink/workload'
import { Redis } from 'ioredis'
import { percentile } from './harness.js'
import type { ResultRow } from './results.js'
import { batchTimer, benchNamespace, benchRedisUrl, type Get, removeNamespace, shuffle } from './support.js'

const BATCH = 1000
const MAX_ROUNDS = Number(process.env.FRONT_DOOR_PASS_THROUGH_ROUNDS ?? 600)
const WARMUP_ROUNDS = 40
// Each workload stops at MAX_ROUNDS or after this long, so that a busy machine does not stretch the run.
const BUDGET_MS = Number(process.env.FRONT_DOOR_PASS_THROUGH_BUDGET_MS ?? 16_000)

interface Workload {
  label: string
  keys: readonly string[]
}

interface Side {
  name: 'heatsink' | 'raw' | 'control'
  get: Get
}

/**
 * What the ioredis front door (`import { Redis } from '@heatsink/agent'`) costs a read it does not mitigate,
 * against raw ioredis: every command through Heatsink's core (sendCommand interception, a registry lookup, a
 * sketch record, miss sampling). Two separate clients, both with enableAutoPipelining, each on its own
 * connection, sending the same batches of 1,000 concurrent GETs. Three workloads: one key that is not in the
 * registry, reads spread evenly over 10,000 existing keys (every read a cold key for the sketch), and reads
 * spread over 100,000 keys that do not exist (every reply a miss).
 *
 * A third client, plain ioredis like the raw one, is the control: raw against raw on separate connections in
 * the same rounds, its offset from 1 is this machine's noise for that workload.
 */
export async function benchFrontDoorPassThrough(): Promise<ResultRow[]> {
  const url = benchRedisUrl()
  const namespace = benchNamespace('front-door-pass-through')
  const admin = new Redis(url)
  const heatsink = new HeatsinkRedis(url, {
    enableAutoPipelining: true,
    heatsink: { namespace, agentId: 'bench-front-door-pass-through' },
  })
  const raw = new Redis(url, { enableAutoPipelining: true })
  const control = new Redis(url, { enableAutoPipelining: true })
  try {
    const existing = keyNames(10_000, (i) => `${namespace}:item:${i}`)
    const pipeline = admin.pipeline()
    for (const key of existing) pipeline.set(key, `value of ${key}`, 'EX', 3600)
    await pipeline.exec()
    await heatsink.heatsink.ready()
    const workloads: Workload[] = [
      { label: 'one key not in the registry', keys: [existing[0] as string] },
      { label: 'even spread over 10,000 existing keys', keys: existing },
      {
        label: 'spread over 100,000 absent keys',
        keys: keyNames(100_000, (i) => `${namespace}:absent:${i}`),
      },
    ]
    const sides: Side[] = [
      { name: 'heatsink', get: (key) => heatsink.get(key) },
      { name: 'raw', get: (key) => raw.get(key) },
      { name: 'control', get: (key) => control.get(key) },
    ]
    const readsBefore = heatsink.heatsink.stats().reads

    const rows: ResultRow[] = []
    let sent = 0
    for (const { label, keys } of workloads) {
      const r = await compare(keys, sides)
      sent += r.sent
      console.log(
        `front-door-pass-through (${label}): Heatsink Redis ${fmt(r.heatsinkRate)} GET/s, raw ioredis ` +
          `${fmt(r.rawRate)} GET/s (medians of ${r.rounds} batches); loss ${pct(r.loss)} (median of per-round ` +
          `ratios, 95% CI ${range(r.lossCi)}; middle half of rounds ${range(r.lossSpread)}); control raw vs raw ` +
          `${pct(r.noise)} (95% CI ${range(r.noiseCi)}; middle half ${range(r.noiseSpread)})`,
      )
      rows.push({
        benchmark: `front door pass-through GET, ${label} (autopipelined, 1,000 concurrent)`,
        heatsink: `${fmt(r.heatsinkRate)} GET/s through @heatsink/agent's Redis`,
        baseline: 'raw ioredis Redis, own connection, same batches',
        baselineFigure: `${fmt(r.rawRate)} GET/s`,
        ratio: r.ratio,
        note:
          `${pct(r.loss)} throughput lost (median of ${r.rounds} per-round ratios, 95% CI ${range(r.lossCi)}; ` +
          `aim: at most 3%); the control (raw against raw, same rounds) was ${pct(r.noise)} off ` +
          `(95% CI ${range(r.noiseCi)})`,
      })
    }
    const stats = heatsink.heatsink.stats()
    if (stats.l1Hits !== 0 || stats.reads - readsBefore < sent) {
      throw new Error(`not a pass-through run: ${stats.reads - readsBefore} reads, ${stats.l1Hits} L1 hits`)
    }
    return rows
  } finally {
    // Closing Heatsink first waits for the process agent to close (its last report included) before cleanup.
    await heatsink.heatsink.close()
    await heatsink.quit().catch(() => {})
    await removeNamespace(admin, namespace)
    for (const connection of [admin, raw, control]) connection.disconnect()
  }
}

/**
 * Runs the three clients in rounds of one batch each, in a random order within each round, and compares each
 * round's times: on these shared cores throughput drifts by several percent within seconds, which batches
 * milliseconds apart share. Each batch ends with a young-generation collection, so that each side pays for its
 * own garbage rather than for whichever batch a scavenge happened to interrupt.
 */
async function compare(keys: readonly string[], sides: readonly Side[]) {
  const batch = batchTimer(keys, BATCH)
  const random = seededRandom(keys.length)
  const times = { heatsink: [] as number[], raw: [] as number[], control: [] as number[] }
  const order = [...sides]
  const deadline = performance.now() + BUDGET_MS
  const took = { heatsink: 0, raw: 0, control: 0 }
  for (let round = -WARMUP_ROUNDS; round < MAX_ROUNDS; round++) {
    if (round >= 50 && performance.now() > deadline) break
    shuffle(order, random)
    for (const side of order) took[side.name] = await batch(side.get)
    if (round < 0) continue
    times.heatsink.push(took.heatsink)
    times.raw.push(took.raw)
    times.control.push(took.control)
  }
  const rounds = times.raw.length
  // Per round, a throughput ratio: the raw batch's time over the other side's (1 means no difference).
  const ratios = sorted(times.raw.map((rawMs, i) => rawMs / (times.heatsink[i] as number)))
  const controls = sorted(times.raw.map((rawMs, i) => rawMs / (times.control[i] as number)))
  const ratio = percentile(ratios, 0.5)
  // Losses are 1 - ratio, so a ratio's upper quantile is the loss's lower bound.
  const loss = (values: number[], [low, high]: [number, number]): [number, number] => [
    1 - (values[high] as number),
    1 - (values[low] as number),
  ]
  const rate = (ms: number[]) => BATCH / (percentile(sorted(ms), 0.5) / 1000)
  return {
    rounds,
    sent: (rounds + WARMUP_ROUNDS) * BATCH,
    ratio,
    heatsinkRate: rate(times.heatsink),
    rawRate: rate(times.raw),
    loss: 1 - ratio,
    lossCi: loss(ratios, medianCi(rounds)),
    lossSpread: loss(ratios, quartiles(rounds)),
    noise: 1 - percentile(controls, 0.5),
    noiseCi: loss(controls, medianCi(rounds)),
    noiseSpread: loss(controls, quartiles(rounds)),
  }
}

// The ranks bounding a 95% confidence interval of the median of n samples (distribution-free, normal
// approximation of the binomial), and the quartiles' ranks.
function medianCi(n: number): [number, number] {
  const half = 0.98 * Math.sqrt(n)
  return [Math.max(0, Math.floor(n / 2 - half)), Math.min(n - 1, Math.ceil(n / 2 + half))]
}

function quartiles(n: number): [number, number] {
  return [Math.floor(n / 4), Math.min(n - 1, Math.floor((3 * n) / 4))]
}

function range([low, high]: [number, number]): string {
  return `${pct(low)} to ${pct(high)}`
}

function sorted(values: number[]): number[] {
  return [...values].sort((a, b) => a - b)
}

function fmt(rate: number): string {
  return `${Math.round(rate / 1000)}k`
}

function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`
}
