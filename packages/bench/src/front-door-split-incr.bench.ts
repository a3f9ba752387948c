import { hrtime } from 'node:process'
import { Redis as HeatsinkRedis } from '@heatsink/agent'
import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { seededRandom } from '@heatsink/workload'
import { Redis } from 'ioredis'
import { percentile } from './harness.js'
import type { ResultRow } from './results.js'
import { benchNamespace, benchRedisUrl, removeNamespace, shuffle, until } from './support.js'

const N = 8
const RATE = Number(process.env.FRONT_DOOR_SPLIT_INCR_RATE ?? 5000)
const TRIAL_MS = Number(process.env.FRONT_DOOR_SPLIT_INCR_TRIAL_MS ?? 1000)
const ROUNDS = Number(process.env.FRONT_DOOR_SPLIT_INCR_ROUNDS ?? 7)
const BURST = 5000
// A GET of another key on the same client every this many ms of a trial.
const GET_EVERY_MS = 10
// After a promotion, writes stay on the base key for 2 s while it reaches every agent (split-strategy.ts).
const ACTIVATION_MS = 2100

interface Side {
  name: 'split' | 'single' | 'raw'
  client: Redis
  counter: string
}

interface Trial {
  /** INCRs answered per second of the trial, counting until the last one was answered. */
  rate: number
  getP50: number
  getMax: number
}

/**
 * A split counter's INCRs through the ioredis front door, and what they cost the other commands of the same
 * client: an offered load of RATE INCR/s (sent on a timer, not awaited, as an application's request handlers
 * would) with a GET of another key every 10 ms on the same client, for TRIAL_MS; and a burst of 5,000 INCRs sent
 * at once. Against the same load on a key that is not split, through the same Heatsink client, and on raw
 * ioredis. Rounds interleave the three in a random order; figures are medians over rounds.
 */
export async function benchFrontDoorSplitIncr(): Promise<ResultRow[]> {
  const url = benchRedisUrl()
  const namespace = benchNamespace('front-door-split-incr')
  const heatsink = new HeatsinkRedis(url, { heatsink: { namespace, agentId: 'bench-front-door-split-incr' } })
  const raw = new Redis(url)
  const plain = new Redis(url)
  try {
    const split = `${namespace}:split-counter`
    const other = `${namespace}:other`
    await plain.set(other, 'x')
    await heatsink.heatsink.ready()
    await publishRegistry(plain, createNames(namespace), { key: split, mitigation: 'split', splitFactor: N })
    await until(() => heatsink.heatsink.mitigation(split) === 'split', 'the split registration')
    await new Promise((resolve) => setTimeout(resolve, ACTIVATION_MS))
    await heatsink.incr(split)
    if (Number(await plain.get(split)) !== 0) throw new Error(`the INCR reached ${split} itself, not a shard`)

    const sides: Side[] = [
      { name: 'split', client: heatsink, counter: split },
      { name: 'single', client: heatsink, counter: `${namespace}:single-counter` },
      { name: 'raw', client: raw, counter: `${namespace}:raw-counter` },
    ]
    const offered = { split: [] as Trial[], single: [] as Trial[], raw: [] as Trial[] }
    const burst = { split: [] as number[], single: [] as number[], raw: [] as number[] }
    const random = seededRandom(ROUNDS)
    for (let round = 0; round < ROUNDS; round++) {
      shuffle(sides, random)
      for (const side of sides) offered[side.name].push(await offeredLoad(side, other))
      shuffle(sides, random)
      for (const side of sides) burst[side.name].push(await burstRate(side))
    }
    const s = medianTrial(offered.split)
    const g = medianTrial(offered.single)
    const r = medianTrial(offered.raw)
    const bs = median(burst.split)
    const bg = median(burst.single)
    const br = median(burst.raw)
    console.log(
      `front-door-split-incr: ${RATE} INCR/s offered for ${TRIAL_MS} ms, GET of another key every ${GET_EVERY_MS} ms ` +
        `on the same client; split N=${N}: ${fmt(s.rate)} INCR/s, GET p50 ${ms(s.getP50)} max ${ms(s.getMax)} | ` +
        `same load on an unsplit key through Heatsink: ${fmt(g.rate)} INCR/s, GET p50 ${ms(g.getP50)} max ${ms(g.getMax)} | ` +
        `raw ioredis: ${fmt(r.rate)} INCR/s, GET p50 ${ms(r.getP50)} max ${ms(r.getMax)}; ` +
        `burst of ${BURST} INCRs: split ${fmt(bs)}/s, unsplit ${fmt(bg)}/s, raw ${fmt(br)}/s ` +
        `(split/raw ${(bs / br).toFixed(2)}x); medians of ${ROUNDS} interleaved rounds`,
    )
    return [
      {
        benchmark: `front door split counter under ${RATE} INCR/s offered: GET of another key on the same client`,
        heatsink: `split N=${N}: GET p50 ${ms(s.getP50)}, max ${ms(s.getMax)}; ${fmt(s.rate)} INCR/s answered`,
        baseline: 'the same load on an unsplit key through the same Heatsink client',
        baselineFigure: `GET p50 ${ms(g.getP50)}, max ${ms(g.getMax)}; ${fmt(g.rate)} INCR/s`,
        ratio: s.getP50 / g.getP50,
        note:
          `GET p50 split / unsplit (lower is better); raw ioredis: GET p50 ${ms(r.getP50)}, ${fmt(r.rate)} INCR/s; ` +
          `medians of ${ROUNDS} interleaved rounds`,
      },
      {
        benchmark: `front door split counter, burst of ${BURST} concurrent INCRs (N=${N})`,
        heatsink: `${fmt(bs)} INCR/s`,
        baseline: 'raw ioredis INCR of one key, same burst',
        baselineFigure: `${fmt(br)} INCR/s`,
        ratio: bs / br,
        note: `throughput split / raw (higher is better); unsplit key through Heatsink ${fmt(bg)} INCR/s; medians of ${ROUNDS} rounds`,
      },
    ]
  } finally {
    await heatsink.heatsink.close()
    await heatsink.quit().catch(() => {})
    await removeNamespace(plain, namespace)
    plain.disconnect()
    raw.disconnect()
  }
}

// INCRs at RATE per second, sent on a timer that catches up with the clock, with a GET every GET_EVERY_MS.
async function offeredLoad({ client, counter }: Side, other: string): Promise<Trial> {
  const incrs: Array<Promise<unknown>> = []
  const gets: number[] = []
  const getting: Array<Promise<unknown>> = []
  const start = hrtime.bigint()
  const elapsedMs = () => Number(hrtime.bigint() - start) / 1e6
  let lastAnswered = start
  let nextGet = 0
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = elapsedMs()
      const due = Math.min(RATE * (TRIAL_MS / 1000), Math.floor((RATE * now) / 1000))
      while (incrs.length < due) {
        incrs.push(
          client.incr(counter).then(() => {
            lastAnswered = hrtime.bigint()
          }),
        )
      }
      if (now >= nextGet && now < TRIAL_MS) {
        nextGet += GET_EVERY_MS
        const sent = hrtime.bigint()
        getting.push(client.get(other).then(() => gets.push(Number(hrtime.bigint() - sent) / 1e6)))
      }
      if (now >= TRIAL_MS) resolve()
      else setTimeout(tick, 1)
    }
    tick()
  })
  await Promise.all([...incrs, ...getting])
  const sorted = gets.sort((a, b) => a - b)
  return {
    rate: incrs.length / (Number(lastAnswered - start) / 1e9),
    getP50: percentile(sorted, 0.5),
    getMax: sorted[sorted.length - 1] ?? 0,
  }
}

async function burstRate({ client, counter }: Side): Promise<number> {
  const start = hrtime.bigint()
  await Promise.all(Array.from({ length: BURST }, () => client.incr(counter)))
  return BURST / (Number(hrtime.bigint() - start) / 1e9)
}

function medianTrial(trials: readonly Trial[]): Trial {
  return {
    rate: median(trials.map((t) => t.rate)),
    getP50: median(trials.map((t) => t.getP50)),
    getMax: median(trials.map((t) => t.getMax)),
  }
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  )
}

function fmt(rate: number): string {
  return Math.round(rate).toLocaleString('en-US')
}

function ms(value: number): string {
  return `${value.toFixed(value < 10 ? 2 : 0)} ms`
}
