import { type Agent, createAgent } from '@heatsink/agent'
import { keyNames, seededRandom } from '@heatsink/workload'
import { Redis } from 'ioredis'
import type { ResultRow } from './results.js'
import { batchTimer, benchNamespace, benchRedisUrl, type Get, removeNamespace } from './support.js'

const BATCH = 1000
const PAIRS = Number(process.env.PASS_THROUGH_PAIRS ?? 2000)
const WARMUP_PAIRS = 200

interface Workload {
  label: string
  keys: readonly string[]
}

/**
 * What the agent costs a read it does not mitigate: a sketch record, a registry lookup and, for some replies, a
 * miss check on top of ioredis's GET. Both sides send the same workload (batches of 1,000 concurrent GETs) through
 * the same client with enableAutoPipelining, so that they share one connection and one ioredis state; only the
 * agent's code differs. Two workloads: one key that is not in the registry (the case the aim is about), and reads
 * spread evenly over 10,000 keys, the sketch's most expensive traffic (every read a cold key).
 *
 * A control pair runs the one-key workload on both sides through the plain client: the difference it shows is
 * this machine's measurement noise, the precision of the other figures.
 */
export async function benchPassThrough(): Promise<ResultRow[]> {
  const url = benchRedisUrl()
  const namespace = benchNamespace('pass-through')
  const admin = new Redis(url)
  const client = new Redis(url, { enableAutoPipelining: true })
  let agent: Agent<Redis> | undefined
  try {
    const spread = keyNames(10_000, (i) => `${namespace}:item:${i}`)
    const pipeline = admin.pipeline()
    for (const key of spread) pipeline.set(key, `value of ${key}`, 'EX', 3600)
    await pipeline.exec()
    agent = createAgent({ redis: client, namespace, agentId: 'bench-pass-through' })
    await agent.ready()
    const viaAgent = agent
    const agentGet: Get = (key) => viaAgent.get(key)
    const rawGet: Get = (key) => client.get(key)
    const sameRawGet: Get = (key) => client.get(key)
    const oneKey: Workload = { label: 'one key not in the registry', keys: [spread[0] as string] }
    const workloads: Workload[] = [oneKey, { label: 'even spread over 10,000 keys', keys: spread }]

    const rows: ResultRow[] = []
    const control = await compare(oneKey.keys, sameRawGet, rawGet)
    const noise = Math.abs(1 - control.ratio) * 100
    console.log(
      `pass-through control (raw ioredis against itself, one key): ratio ${control.ratio.toFixed(3)}`,
    )
    for (const { label, keys } of workloads) {
      const { ratio, agentRate, rawRate } = await compare(keys, agentGet, rawGet)
      const lost = (1 - ratio) * 100
      console.log(
        `pass-through (${label}): agent ${fmt(agentRate)} GET/s, raw ioredis ${fmt(rawRate)} GET/s, ` +
          `throughput ratio ${ratio.toFixed(3)} (${lost.toFixed(1)}% lost; control ${noise.toFixed(1)}% off)`,
      )
      rows.push({
        benchmark: `pass-through GET, ${label} (autopipelined, 1,000 concurrent)`,
        heatsink: `${fmt(agentRate)} GET/s through the agent`,
        baseline: 'raw ioredis, same client and workload',
        baselineFigure: `${fmt(rawRate)} GET/s`,
        ratio,
        note:
          `${lost.toFixed(1)}% throughput lost (aim: at most 3%); ${PAIRS} interleaved batch pairs; the control ` +
          `(raw against raw) was ${noise.toFixed(1)}% off in the same run`,
      })
    }
    const stats = agent.stats()
    if (stats.l1Hits !== 0 || stats.reads < 2 * BATCH * PAIRS) throw new Error('not a pass-through run')
    return rows
  } finally {
    await agent?.close()
    await removeNamespace(admin, namespace)
    for (const connection of [admin, client]) connection.disconnect()
  }
}

/**
 * Runs the two sides in pairs of batches, in a random order within each pair, and compares their total times.
 * On these shared cores throughput drifts by several percent within seconds, which batches milliseconds apart
 * share. The order is random because a fixed one (A B B A) lined up with periodic work elsewhere on the machine
 * and favoured one side by up to 4% when both were the same client. Each batch ends with a young-generation
 * collection, so that each side pays for its own garbage rather than for whichever batch a scavenge happened to
 * interrupt.
 */
async function compare(keys: readonly string[], viaAgent: Get, direct: Get) {
  const batch = batchTimer(keys, BATCH)
  const random = seededRandom(PAIRS)
  let agentMs = 0
  let directMs = 0
  for (let pair = -WARMUP_PAIRS; pair < PAIRS; pair++) {
    const agentFirst = random() < 0.5
    const first = await batch(agentFirst ? viaAgent : direct)
    const second = await batch(agentFirst ? direct : viaAgent)
    if (pair < 0) continue
    agentMs += agentFirst ? first : second
    directMs += agentFirst ? second : first
  }
  const gets = BATCH * PAIRS
  return { ratio: directMs / agentMs, agentRate: gets / (agentMs / 1000), rawRate: gets / (directMs / 1000) }
}

function fmt(rate: number): string {
  return `${Math.round(rate / 1000)}k`
}
