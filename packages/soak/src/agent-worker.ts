import { Redis } from '@heatsink/agent'
import { seededRandom, ZipfSampler } from '@heatsink/workload'
import { BACKGROUND_KEYS, HOT_SHARE, INCR_SHARE, trafficAt, WRITE_SHARE } from './traffic-plan.js'
import type { WorkerReply, WorkerRequest } from './worker-messages.js'

// One agent process of the soak: plain ioredis calls through Heatsink's front door, at its share of the rate.

const namespace = process.env.SOAK_NAMESPACE as string
const index = Number(process.env.SOAK_AGENT_INDEX)
const rate = Number(process.env.SOAK_RATE)
const startedAt = Number(process.env.SOAK_STARTED_AT)
const SLICE_MS = 10
// Commands in flight beyond this are not sent (counted as shed): a process that cannot keep up must show it,
// not queue without bound and mistake its own backlog for a leak.
const MAX_IN_FLIGHT = 5_000

const redis = new Redis(process.env.REDIS_URL as string, {
  heatsink: { namespace, agentId: `soak-agent-${index}-${process.pid}` },
})
await redis.heatsink.ready()

const random = seededRandom(index + 1)
const zipf = new ZipfSampler(BACKGROUND_KEYS, 1.1, random)
const backgroundKeys = Array.from({ length: BACKGROUND_KEYS }, (_, i) => `${namespace}:bg:${i}`)
let commands = 0
let errors = 0
let shed = 0
let inFlight = 0
let lastError = ''

const done = () => {
  inFlight--
  commands++
}
const failed = (error: Error) => {
  inFlight--
  errors++
  lastError = error.message
}
function send(command: Promise<unknown>): void {
  inFlight++
  command.then(done, failed)
}

const perSlice = (rate * SLICE_MS) / 1000
let carry = 0
let lastHotRead: string | null = null
const driver = setInterval(() => {
  const moment = trafficAt(namespace, (Date.now() - startedAt) / 1000)
  if (moment.hotRead !== null && moment.hotRead !== lastHotRead) {
    // The viral post exists before it is read (the first agent to get there writes it): reads of a missing key
    // would be mostly misses, which the aggregator answers with coalesce rather than local_cache.
    send(redis.set(moment.hotRead, `post ${moment.hotRead}`, 'EX', 120, 'NX'))
  }
  lastHotRead = moment.hotRead
  carry += perSlice
  const count = Math.floor(carry)
  carry -= count
  const hotCount = moment.hotRead === null ? 0 : Math.round(count * HOT_SHARE)
  for (let i = 0; i < count; i++) {
    if (inFlight >= MAX_IN_FLIGHT) {
      shed += count - i
      break
    }
    if (i < hotCount) {
      if (moment.hotCounter !== null && i % 2 === 1) send(redis.incr(moment.hotCounter))
      else send(redis.get(moment.hotRead as string))
      continue
    }
    const key = backgroundKeys[zipf.next()] as string
    const draw = random()
    if (draw < WRITE_SHARE) send(redis.set(key, `value-${commands}`, 'EX', 300))
    else if (draw < WRITE_SHARE + INCR_SHARE) send(redis.incr(`${key}:n`))
    else send(redis.get(key))
  }
}, SLICE_MS)

process.on('message', (request: WorkerRequest) => {
  if (request.type === 'stop') {
    clearInterval(driver)
    void redis.quit().finally(() => process.exit(0))
    return
  }
  // Heap measured after a full collection (the soak forks workers with --expose-gc): what survives is what a leak
  // would be made of, without the sawtooth of garbage not yet collected. A major collection of a heap this size
  // takes tens of milliseconds, once per sample.
  ;(globalThis as { gc?: () => void }).gc?.()
  const stats = redis.heatsink.stats()
  const reply: WorkerReply = {
    type: 'sample',
    id: request.id,
    heapBytes: process.memoryUsage().heapUsed,
    commands,
    errors,
    shed,
    lastError,
    reportsSent: stats.reportsSent,
    reportsDropped: stats.reportsDropped,
    l1Hits: stats.l1Hits,
    reads: stats.reads,
  }
  process.send?.(reply)
})
process.send?.({ type: 'ready' } satisfies WorkerReply)
