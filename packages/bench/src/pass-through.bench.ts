import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { type Agent, createAgent } from '@heatsink/agent'
import { keyNames } from '@heatsink/workload'
import { Redis } from 'ioredis'
import type { ResultRow } from './results.js'
import { benchNamespace, benchRedisUrl, removeNamespace } from './support.js'

const BATCH = 1000
const BATCHES_PER_ROUND = 20
const QUADS = 20

interface Workload {
  label: string
  keys: readonly string[]
}

/**
 * What the agent costs a read it does not mitigate: a sketch record, a registry lookup and a miss check on top
 * of ioredis's GET. Both sides run the same workload (batches of 1,000 concurrent GETs, each side on its own
 * client with enableAutoPipelining) in short alternating rounds, so that load drifting on a shared machine
 * falls on both; client CPU time per GET is given beside the throughput.
 * Two workloads: one key that is not in the registry (the case the aim is about), and reads spread evenly over
 * 10,000 keys, the sketch's most expensive traffic (every read a cold key).
 */
export async function benchPassThrough(): Promise<ResultRow[]> {
  const url = benchRedisUrl()
  const namespace = benchNamespace('pass-through')
  const admin = new Redis(url)
  const raw = new Redis(url, { enableAutoPipelining: true })
  const wrapped = new Redis(url, { enableAutoPipelining: true })
  let agent: Agent<Redis> | undefined
  try {
    const spread = keyNames(10_000, (i) => `${namespace}:item:${i}`)
    const pipeline = admin.pipeline()
    for (const key of spread) pipeline.set(key, `value of ${key}`, 'EX', 3600)
    await pipeline.exec()
    agent = createAgent({ redis: wrapped, namespace, agentId: 'bench-pass-through' })
    await agent.ready()
    const viaAgent = agent
    const workloads: Workload[] = [
      { label: 'one key not in the registry', keys: [spread[0] as string] },
      { label: 'even spread over 10,000 keys', keys: spread },
    ]
    const rows: ResultRow[] = []
    for (const { label, keys } of workloads) {
      const { ratio, cpuRatio, agentRate, rawRate } = await compare(
        keys,
        (key) => viaAgent.get(key),
        (key) => raw.get(key),
      )
      const lost = (1 - ratio) * 100
      console.log(
        `pass-through (${label}): agent ${fmt(agentRate)} GET/s, raw ioredis ${fmt(rawRate)} GET/s, ` +
          `median quad throughput ratio ${ratio.toFixed(3)} (${lost.toFixed(1)}% lost), client CPU per GET ` +
          `ratio ${cpuRatio.toFixed(3)} (${QUADS} ABBA quads of rounds of ${BATCHES_PER_ROUND} x ${BATCH})`,
      )
      rows.push({
        benchmark: `pass-through GET, ${label} (autopipelined, 1,000 concurrent)`,
        heatsink: `${fmt(agentRate)} GET/s through the agent`,
        baseline: 'raw ioredis, same workload',
        baselineFigure: `${fmt(rawRate)} GET/s`,
        ratio,
        note: `throughput ratio, median of ABBA quads: ${lost.toFixed(1)}% lost (aim: at most 3%); client CPU per GET x${cpuRatio.toFixed(3)}`,
      })
    }
    const stats = agent.stats()
    if (stats.l1Hits !== 0 || stats.reads < 4 * BATCH * BATCHES_PER_ROUND * QUADS) {
      throw new Error('not a pass-through run')
    }
    return rows
  } finally {
    await agent?.close()
    await removeNamespace(admin, namespace)
    for (const client of [admin, raw, wrapped]) client.disconnect()
  }
}

interface Round {
  rate: number
  cpuNsPerGet: number
}

// Rounds run in ABBA quads, each after a forced full GC (when it can be had), because a round otherwise pays
// for the garbage of the round before it: measured here, plain ABAB pairs of two identical raw clients gave
// the first of each pair a 4% edge. A quad's ratio is (A1 + A2) / (B1 + B2); the figure is the median quad.
async function compare(
  keys: readonly string[],
  viaAgent: (key: string) => Promise<string | null>,
  direct: (key: string) => Promise<string | null>,
) {
  const collect = garbageCollector()
  let position = 0
  const pending = new Array<Promise<string | null>>(BATCH)
  const round = async (get: (key: string) => Promise<string | null>): Promise<Round> => {
    collect()
    const cpu = process.cpuUsage()
    const start = performance.now()
    for (let b = 0; b < BATCHES_PER_ROUND; b++) {
      for (let i = 0; i < BATCH; i++) {
        pending[i] = get(keys[position] as string)
        position = (position + 7) % keys.length
      }
      await Promise.all(pending)
    }
    const used = process.cpuUsage(cpu)
    const gets = BATCH * BATCHES_PER_ROUND
    return {
      rate: gets / ((performance.now() - start) / 1000),
      cpuNsPerGet: ((used.user + used.system) * 1000) / gets,
    }
  }
  const ratios: number[] = []
  const cpuRatios: number[] = []
  const agentRates: number[] = []
  const rawRates: number[] = []
  for (let quad = -1; quad < QUADS; quad++) {
    const a1 = await round(viaAgent)
    const r1 = await round(direct)
    const r2 = await round(direct)
    const a2 = await round(viaAgent)
    if (quad < 0) continue // warm-up
    ratios.push((a1.rate + a2.rate) / (r1.rate + r2.rate))
    cpuRatios.push((a1.cpuNsPerGet + a2.cpuNsPerGet) / (r1.cpuNsPerGet + r2.cpuNsPerGet))
    agentRates.push(a1.rate, a2.rate)
    rawRates.push(r1.rate, r2.rate)
  }
  return {
    ratio: median(ratios),
    cpuRatio: median(cpuRatios),
    agentRate: median(agentRates),
    rawRate: median(rawRates),
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = sorted.length / 2
  return Number.isInteger(mid)
    ? ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
    : (sorted[Math.floor(mid)] as number)
}

// A full collection between rounds, through V8's gc() exposed at run time; a no-op where V8 refuses.
function garbageCollector(): () => void {
  try {
    setFlagsFromString('--expose_gc')
    const gc = runInNewContext('gc') as unknown
    if (typeof gc === 'function') return gc as () => void
  } catch {
    // Fall through: rounds still alternate, only less evenly.
  }
  return () => {}
}

function fmt(rate: number): string {
  return `${Math.round(rate / 1000)}k`
}
