import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ensureRedis, type RunningService, ServiceUnavailableError } from '@heatsink/devservices'
import { createNames, decodeRegistryEvent } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { type ControlPlane, startControlPlane } from './control-plane.js'
import { eventLine, fit, renderSummary, renderView, type ViewEvent, type ViewState } from './dashboard.js'
import { parseQuickstartOptions } from './options.js'
import { type ProxyProcess, startProxyProcess } from './proxy-process.js'
import { markRunning, otherRunsLive, removeAbandonedRuns, removeKeys, runNamespace } from './run-namespace.js'
import { backgroundKey, QUICKSTART_HOT_RPS, SCENARIO } from './scenario.js'

// The README's first command: a small live Heatsink cluster (two aggregator replicas, three agent processes
// driving realistic traffic, and a proxy with a plain client behind it) and a live view of what it detects and
// mitigates. Runs until Ctrl-C, or for
// --seconds=N, and stops everything it started.

const AGENTS = 3
const STOP_TIMEOUT_MS = 20_000
const namespace = runNamespace(process.env)
let seconds: number
try {
  // NaN when not given: the run goes on until Ctrl-C.
  seconds = parseQuickstartOptions(process.argv.slice(2)).seconds ?? Number.NaN
} catch (error) {
  console.error(`heatsink quickstart: ${(error as Error).message}`)
  process.exit(2)
}
const interactive = process.stdout.isTTY === true
// Progress from the first second: each step says what it is doing before doing it.
console.log('Heatsink quickstart: starting Redis, 2 aggregator replicas, 3 agent processes and a proxy...')

let redisService: RunningService
try {
  redisService = await ensureRedis({ log: (message) => console.log(message) })
} catch (error) {
  if (!(error instanceof ServiceUnavailableError)) throw error
  console.error(error.message)
  process.exit(1)
}
const redis = new Redis(redisService.url)
// Marked first, so that a run starting meanwhile never takes this one's keys for an abandoned run's.
const running = await markRunning(redis, namespace)
await removeAbandonedRuns(redis)
// The demo keys are shared by every run on this Redis: left by an interrupted run, they go only if none is live.
if (!(await otherRunsLive(redis, namespace))) await removeKeys(redis, 'demo:*')
await seed(redis)

console.log('Starting the control plane (2 aggregator replicas, registry migrations)...')
const control: ControlPlane = await startControlPlane(redisService.url, namespace)
console.log('Starting the Heatsink proxy (any Redis client, in any language, can use it)...')
const proxy: ProxyProcess = await startProxyProcess(redisService.url, namespace)
const events: ViewEvent[] = []
const detectedAt = new Map<string, number>()
const redisBefore = new Map<string, number>()
const subscriber = new Redis(redisService.url)
await subscriber.subscribe(createNames(namespace).registryChannel)
subscriber.on('message', (_channel, message) => {
  const event = decodeRegistryEvent(message)
  const now = Date.now()
  if (event.type === 'demote') {
    events.push({ at: now, text: `${event.key} demoted: ${event.reason}` })
    return
  }
  const { key, mitigation, splitFactor, source } = event.entry
  const onsetSeconds = [SCENARIO.viral, SCENARIO.counter, SCENARIO.expiring, SCENARIO.proxied].find(
    (s) => s.key === key,
  )?.startSeconds
  const onset = onsetSeconds === undefined ? undefined : startedAt + onsetSeconds * 1000
  const latency =
    onset === undefined ? '' : `, ${((now - onset) / 1000).toFixed(2)} s after the traffic began`
  detectedAt.set(key, now)
  events.push({
    at: now,
    text: `${key} ${event.type}d (${source}): ${mitigation}${mitigation === 'split' ? ` x${splitFactor}` : ''}${latency}`,
  })
})

// Agents start together on one timeline, a second from now so every process is up when it begins.
const startedAt = Date.now() + 1000
const agentEntry = fileURLToPath(new URL('./traffic-agent.js', import.meta.url))
const children: ChildProcess[] = []
const databaseLoads = new Map<number, number>()
for (let index = 0; index < AGENTS; index++) {
  const child = fork(agentEntry, [], {
    env: {
      ...process.env,
      REDIS_URL: redisService.url,
      HEATSINK_NAMESPACE: namespace,
      AGENT_INDEX: String(index),
      SCENARIO_START: String(startedAt),
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  child.on('message', (message) =>
    databaseLoads.set(index, (message as { databaseLoads: number }).databaseLoads),
  )
  children.push(child)
}

// The client that is not an agent: plain ioredis through the proxy.
const plainClient = fork(fileURLToPath(new URL('./plain-client.js', import.meta.url)), [], {
  env: { ...process.env, PROXY_PORT: String(proxy.port), SCENARIO_START: String(startedAt) },
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
})
children.push(plainClient)

// The dashboard first: it is what to open. Nothing is opened for the user.
const header = [
  `Dashboard: ${control.urls[0]}/   (replica 2: ${control.urls[1]}/, the same picture)`,
  'Heatsink quickstart: 2 aggregator replicas, 3 agent processes, live traffic. Ctrl-C stops everything.',
  `API docs: ${control.urls[0]}/docs   registry: ${control.database}`,
  ...control.portNotes,
  `Proxy: redis://127.0.0.1:${proxy.port}${proxy.fellBack ? ' (6380 is taken)' : ''}, Heatsink's RESP proxy: a plain ioredis client (no Heatsink code)`,
  `  reads ${SCENARIO.proxied.key} through it at ${SCENARIO.proxied.rps.toLocaleString('en')} req/s from +${SCENARIO.proxied.startSeconds}s`,
  `Redis: ${redisService.url}${redisService.started ? ' (private, started for this run)' : ''}   namespace ${namespace}   hot at ${QUICKSTART_HOT_RPS.toLocaleString('en')} req/s cluster-wide`,
  `Traffic: ${(SCENARIO.backgroundRps * AGENTS).toLocaleString('en')} req/s Zipf background over ${SCENARIO.backgroundKeys.toLocaleString('en')} keys; ${SCENARIO.viral.key} goes viral at +${SCENARIO.viral.startSeconds}s (${(SCENARIO.viral.rpsPerAgent * AGENTS).toLocaleString('en')} req/s);`,
  `  its like counter ${SCENARIO.counter.key} turns write-hot at +${SCENARIO.counter.startSeconds}s (${(SCENARIO.counter.rpsPerAgent * AGENTS).toLocaleString('en')} INCR/s); ${SCENARIO.expiring.key}, loaded from a ${SCENARIO.expiring.loadMs} ms "database" with a ${SCENARIO.expiring.ttlSeconds} s TTL, is read at ${(SCENARIO.expiring.rpsPerAgent * AGENTS).toLocaleString('en')} req/s from +${SCENARIO.expiring.startSeconds}s`,
]
console.log(fit(header).join('\n'))
console.log(
  `Started ${AGENTS} agent processes; the traffic begins at +0s. ${interactive ? 'The view redraws every second.' : 'Events print as they happen, the registry every 5 s.'}`,
)

// A frame still waiting on Redis when the next is due is not overlapped: that tick is skipped.
let drawing = false
const ticker = setInterval(() => {
  if (drawing) return
  drawing = true
  frame()
    .catch((error: unknown) => {
      // A frame cut short by the stop is not news; any other failure is, and the next tick tries again.
      if (!stopping) console.error(`the view could not be read: ${(error as Error).message}`)
    })
    .finally(() => {
      drawing = false
    })
}, 1000)
// --seconds ends the run on time even if a frame hangs on a stalled Redis.
const deadline = Number.isFinite(seconds)
  ? setTimeout(() => void stop(), Math.max(0, startedAt + seconds * 1000 - Date.now() + 500))
  : undefined
let printedEvents = 0
let lastSummary = -5
async function frame(): Promise<void> {
  const elapsedSeconds = Math.max(0, Math.round((Date.now() - startedAt) / 1000))
  const replica = control.replicas[0]
  if (replica === undefined) return
  const active = await replica.registry.list().catch(() => [])
  const entries = await Promise.all(
    active.map(async (entry) => {
      const stats = await replica.detection.traffic.keyStats(entry.key)
      // Before mitigation every read of the key reached Redis. The first windows after a promotion may still be
      // partly counted, so "before" is the highest rate seen in the first seconds after it.
      const promotedFor = Date.now() - (detectedAt.get(entry.key) ?? 0)
      if (stats !== undefined && promotedFor < 3000) {
        redisBefore.set(entry.key, Math.max(redisBefore.get(entry.key) ?? 0, stats.requestsPerSecond))
      }
      return { entry, stats, redisBefore: redisBefore.get(entry.key) }
    }),
  )
  const loads = [...databaseLoads.values()].reduce((sum, n) => sum + n, 0)
  const expiringFor = Math.max(0, elapsedSeconds - SCENARIO.expiring.startSeconds)
  const footer =
    expiringFor > 0
      ? `${SCENARIO.expiring.key}: ${loads} database load(s) in ${expiringFor} s of ${(SCENARIO.expiring.rpsPerAgent * AGENTS).toLocaleString('en')} reads/s with a ${SCENARIO.expiring.ttlSeconds} s TTL (about one per expiry; without coalescing, each expiry would send every waiting reader to the database)`
      : ''
  const state: ViewState = {
    elapsedSeconds,
    header,
    entries,
    events,
    startedAt,
    footer: [await proxiedLine(), footer].filter((line) => line !== '').join('\n'),
  }
  if (interactive) {
    process.stdout.write(`\x1b[2J\x1b[H${renderView(state)}\n\n  t = +${elapsedSeconds}s\n`)
  } else {
    // A log: one line per event as it happens, and the registry table every five seconds.
    for (; printedEvents < events.length; printedEvents++) {
      console.log(fit([eventLine(events[printedEvents] as ViewEvent, startedAt)]).join('\n'))
    }
    if (elapsedSeconds >= lastSummary + 5) {
      lastSummary = elapsedSeconds
      console.log(renderSummary(state))
    }
  }
}

// What the proxy did for the client that knows nothing of Heatsink (its only client: every GET is the key's).
async function proxiedLine(): Promise<string> {
  const { gets, servedFromL1 } = await proxy
    .reads(SCENARIO.proxied.key)
    .catch(() => ({ gets: 0, servedFromL1: 0 }))
  if (gets === 0) return ''
  return `${SCENARIO.proxied.key} via the proxy: ${gets.toLocaleString('en')} reads by the plain client, ${((100 * servedFromL1) / gets).toFixed(1)}% from the proxy's L1`
}

let stopping = false
async function stop(): Promise<void> {
  if (stopping) return
  stopping = true
  clearInterval(ticker)
  clearTimeout(deadline)
  // A stalled Redis or database must not keep the run alive: whatever is not stopped by then is left to the OS.
  setTimeout(() => {
    console.error(
      `stopping took longer than ${STOP_TIMEOUT_MS / 1000} s (is Redis answering?); exiting anyway`,
    )
    process.exit(1)
  }, STOP_TIMEOUT_MS).unref()
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          child.once('exit', resolve)
          child.kill('SIGTERM')
        }),
    ),
  )
  const proxiedSummary = await proxiedLine()
  await proxy.stop()
  await subscriber.quit()
  await control.stop()
  await removeKeys(redis, `${namespace}:*`)
  if (!(await otherRunsLive(redis, namespace))) await removeKeys(redis, 'demo:*')
  await running.stop()
  await redis.quit()
  await redisService.stop()
  const detected = detectedAt.has(SCENARIO.viral.key)
  console.log(
    detected
      ? `\n${SCENARIO.viral.key} was detected and mitigated.`
      : `\n${SCENARIO.viral.key} was not detected.`,
  )
  if (proxiedSummary !== '') console.log(proxiedSummary)
  process.exit(Number.isFinite(seconds) && seconds > SCENARIO.viral.startSeconds + 3 && !detected ? 1 : 0)
}
process.on('SIGINT', () => void stop())
process.on('SIGTERM', () => void stop())

// Values for every key the traffic reads, so reads hit as in a warm cache.
async function seed(client: Redis): Promise<void> {
  const pipeline = client.pipeline()
  for (let i = 0; i < SCENARIO.backgroundKeys; i++) pipeline.set(backgroundKey(i), `product ${i}`, 'EX', 3600)
  pipeline.set(SCENARIO.viral.key, JSON.stringify({ id: 42, text: 'a post everyone reads' }), 'EX', 3600)
  pipeline.set(SCENARIO.proxied.key, JSON.stringify({ id: 7, name: 'a celebrity' }), 'EX', 3600)
  await pipeline.exec()
}
