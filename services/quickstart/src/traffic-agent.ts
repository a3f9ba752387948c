import { Cluster, Redis } from '@heatsink/agent'
import { isSentinelUrl, parseSentinelUrl } from '@heatsink/protocol'
import { seededRandom, ZipfSampler } from '@heatsink/workload'
import { readFlagsCacheAside, runFlagsRedeploy } from './flags-readers.js'
import { PacedStream } from './paced-stream.js'
import { backgroundKey, SCENARIO } from './scenario.js'

// One agent process of the quickstart (and the demo agent of deploy/compose.yaml): drives the scenario's traffic
// through Heatsink's ioredis client: the application code is plain ioredis, only the import differs. Run standalone it logs its counters every five seconds; under the quickstart, whose
// view reads the control plane instead, it stays quiet and exits when the quickstart goes away.

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const namespace = process.env.HEATSINK_NAMESPACE ?? 'heatsink'
const index = Number(process.env.AGENT_INDEX ?? 0)
const startedAt = Number(process.env.SCENARIO_START ?? Date.now())
const SLICE_MS = 10

const heatsink = { namespace, agentId: `quickstart-agent-${index}-${process.pid}` }
// A redis+sentinel:// URL (the quickstart's --sentinel) becomes ioredis's own Sentinel options, with
// failoverDetector as ioredis advises: the client (and the agent with it) leaves the old primary on +switch-master
// instead of writing for seconds to a server Sentinel is about to demote, whose writes are then lost.
// With HEATSINK_REDIS_CLUSTER=true (the quickstart's --cluster), REDIS_URL is one node of a Cluster: the drop-in
// Cluster learns the rest.
const redis =
  process.env.HEATSINK_REDIS_CLUSTER === 'true'
    ? new Cluster([{ host: new URL(redisUrl).hostname, port: Number(new URL(redisUrl).port) }], { heatsink })
    : isSentinelUrl(redisUrl)
      ? new Redis({ ...parseSentinelUrl(redisUrl), failoverDetector: true, heatsink })
      : new Redis(redisUrl, { heatsink })
// A failover drops the connection; ioredis reconnects by itself and the traffic goes on, so it is not news here.
redis.on('error', () => {})
await redis.heatsink.ready()

const zipf = new ZipfSampler(SCENARIO.backgroundKeys, 1.1, seededRandom(index + 1))
const names = Array.from({ length: SCENARIO.backgroundKeys }, (_, i) => backgroundKey(i))
let viralRequests = 0
let databaseLoads = 0

// The slow source behind the expiring key: each call is one "database query".
async function loadRates(): Promise<{ usdEur: number; loadedAt: number }> {
  databaseLoads++
  await new Promise((resolve) => setTimeout(resolve, SCENARIO.expiring.loadMs))
  return { usdEur: 0.92, loadedAt: Date.now() }
}

// The storefront's flags, from the database behind its cache-aside reads.
async function queryFlags(): Promise<{ flags: string[]; loadedAt: number }> {
  await new Promise((resolve) => setTimeout(resolve, SCENARIO.flags.loadMs))
  return { flags: ['new-checkout', 'dark-mode'], loadedAt: Date.now() }
}

const stopRedeploy = index === 0 ? runFlagsRedeploy(redis, startedAt) : () => {}

const streams = {
  background: new PacedStream(SCENARIO.backgroundRps, 0),
  viral: new PacedStream(SCENARIO.viral.rpsPerAgent, SCENARIO.viral.startSeconds),
  counter: new PacedStream(SCENARIO.counter.rpsPerAgent, SCENARIO.counter.startSeconds),
  flags: new PacedStream(SCENARIO.flags.rpsPerAgent, SCENARIO.flags.startSeconds),
  expiring: new PacedStream(SCENARIO.expiring.rpsPerAgent, SCENARIO.expiring.startSeconds),
}

const driver = setInterval(() => {
  const elapsedMs = Date.now() - startedAt
  for (let i = 0, n = streams.background.due(elapsedMs); i < n; i++) {
    void redis.get(names[zipf.next()] as string).catch(() => {})
  }
  for (let i = 0, n = streams.viral.due(elapsedMs); i < n; i++) {
    viralRequests++
    void redis.get(SCENARIO.viral.key).catch(() => {})
  }
  for (let i = 0, n = streams.counter.due(elapsedMs); i < n; i++) {
    void redis.incr(SCENARIO.counter.key).catch(() => {})
  }
  for (let i = 0, n = streams.flags.due(elapsedMs); i < n; i++) {
    void readFlagsCacheAside(redis, queryFlags).catch(() => {})
  }
  for (let i = 0, n = streams.expiring.due(elapsedMs); i < n; i++) {
    void redis.heatsink
      .getOrLoad(SCENARIO.expiring.key, loadRates, { ttlSeconds: SCENARIO.expiring.ttlSeconds })
      .catch(() => {})
  }
}, SLICE_MS)

const reporter = setInterval(() => {
  // Under the quickstart the view reads the control plane; only the database loads are known here alone.
  if (process.send !== undefined) {
    process.send({ databaseLoads })
    return
  }
  if (Math.round((Date.now() - startedAt) / 1000) % 5 !== 0) return
  const stats = redis.heatsink.stats()
  const viral = redis.heatsink.mitigation(SCENARIO.viral.key) ?? 'none'
  console.log(JSON.stringify({ index, viralRequests, databaseLoads, requests: stats.requests, viral }))
}, 1000)

async function stop(): Promise<void> {
  clearInterval(driver)
  stopRedeploy()
  clearInterval(reporter)
  await redis.heatsink.close()
  await redis.quit()
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())
process.on('disconnect', () => void stop())
