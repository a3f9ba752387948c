// One process of simulated agents for the fleet detection test and benchmark (forked by fleet-run.ts): each agent
// is the agent's own WindowRecorder and ReportingTuning, fed a synthetic traffic mix, reporting every window as the
// agent's Reporter does (one final report per window, candidates in the compact form, XADD to its stream). After
// every window it sends the parent the exact counts it generated and the bytes its agents reported.
import { ReportingTuning, type ReportingTuningOptions } from '@heatsink/agent'
import { compactCandidate, createNames, encodeReport, STREAM_FIELD, WIRE_VERSION } from '@heatsink/protocol'
import { WindowRecorder } from '@heatsink/sketch'
import { keyNames, seededRandom, ZipfSampler } from '@heatsink/workload'
import { Redis } from 'ioredis'
import { fleetAgentId, type PlantedKey, type WorkerPlan, type WorkerWindow } from './fleet-plan.js'

const plan = await new Promise<WorkerPlan>((resolve) => process.once('message', resolve))
const { namespace, windowMs, firstAgent, agentCount, fleetSize, start } = plan
const names = createNames(namespace)
const redis = new Redis(plan.redisUrl)
const subscriber = new Redis(plan.redisUrl)
// Keys as real caches name them (`product:12345`): they only travel in reports, never reach Redis as data, so
// they need no namespace, and their length is what a report's size depends on.
const background = keyNames(plan.backgroundKeys)
const silent = { debug() {}, info() {}, warn() {}, error() {} }
let registered: string[] = []

const agents = Array.from({ length: agentCount }, (_, i) => {
  const index = firstAgent + i
  // The agent's defaults: top 32, report floor 100, lowered only by the control plane's tuning.
  const recorder = new WindowRecorder({ reportFloor: 100, windowStart: start })
  const tuning = new ReportingTuning({
    recorder,
    windowMs,
    configuredFloor: 100,
    // Without tuning, as agents were before it: nothing pinned, registered keys compete for the top K as well.
    registeredKeys: () => (plan.tuned ? registered : []),
    now: () => Date.now(),
    registryKey: null,
    counters: { badMessages: 0, forgedMessages: 0 } as ReportingTuningOptions['counters'],
    log: silent,
  })
  const zipf = new ZipfSampler(background.length, plan.zipfS, seededRandom(plan.seed * 7919 + index))
  return { id: fleetAgentId(index), index, recorder, tuning, zipf, seq: 0 }
})

function applyTuning(text: string): void {
  if (plan.tuned) for (const agent of agents) agent.tuning.receive(text)
}
subscriber.on('message', (_channel: string, text: string) => applyTuning(text))
await subscriber.subscribe(names.tuningChannel)
const latest = await redis.get(names.tuningKey)
if (latest !== null) applyTuning(latest)

// The requests agent `index` receives for a planted key in window `w`: an even split of the count over the agents
// that serve it, the remainder going to agents picked by a rotation that changes every window.
function share(planted: PlantedKey, index: number, w: number): number {
  const servers = planted.agents ?? fleetSize
  if (index >= servers) return 0
  const base = Math.floor(planted.count / servers)
  const extra = planted.count % servers
  return base + ((index + planted.rotation * (w + 1)) % servers < extra ? 1 : 0)
}

async function readRegistry(): Promise<void> {
  const text = await redis.hget(names.registrySnapshotKey, 'snapshot')
  registered =
    text === null ? [] : (JSON.parse(text) as { entries: Array<{ key: string }> }).entries.map((e) => e.key)
}

for (let w = 0; w < plan.windows; w++) {
  const windowStart = start + w * windowMs
  const exact = new Map<string, number>()
  const random = seededRandom(plan.seed * 104_729 + w * 31 + firstAgent)
  for (const agent of agents) {
    const requests: string[] = []
    for (let i = 0; i < plan.backgroundPerAgent; i++) requests.push(background[agent.zipf.next()] as string)
    for (const planted of plan.planted) {
      for (let n = share(planted, agent.index, w); n > 0; n--) requests.push(planted.key)
    }
    for (let i = requests.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[requests[i], requests[j]] = [requests[j] as string, requests[i] as string]
    }
    for (const key of requests) {
      agent.recorder.record(key)
      exact.set(key, (exact.get(key) ?? 0) + 1)
    }
  }
  const wait = windowStart + windowMs - Date.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  const pipeline = redis.pipeline()
  const registeredSet = new Set(registered)
  let bytes = 0
  for (const agent of agents) {
    const summary = agent.recorder.rollover(windowStart + windowMs)
    const text = encodeReport({
      v: WIRE_VERSION,
      kind: 'report',
      agentId: agent.id,
      seq: ++agent.seq,
      windowStart,
      windowMs,
      total: summary.total,
      dropped: 0,
      partial: false,
      candidates: summary.hitters.map(({ key, count, reads, writes, misses }) =>
        compactCandidate(key, count, reads, writes, misses),
      ),
      // What a real agent adds for the registered keys it served in the window: a local_cache key's L1 hits.
      hotKeyStats: summary.hitters
        .filter(({ key }) => registeredSet.has(key))
        .map(({ key, count }) => ({ key, l1Hits: count })),
    })
    bytes += Buffer.byteLength(text)
    pipeline.xadd(names.reportStreamFor(agent.id), '*', STREAM_FIELD, text)
    agent.tuning.repin()
  }
  await pipeline.exec()
  await readRegistry().catch(() => {})
  const floor = agents[0]?.recorder.reportFloor ?? 0
  const message: WorkerWindow = { window: w, bytes, agents: agentCount, floor, exact: [...exact] }
  process.send?.(message)
}
redis.disconnect()
subscriber.disconnect()
process.exit(0)
