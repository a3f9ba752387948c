import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createNames, decodeRegistryEvent, type NodesView } from '@heatsink/protocol'
import { AbsorbedShare } from './absorbed-share.js'
import { type ControlPlane, startControlPlane } from './control-plane.js'
import { eventLine, fit, renderSummary, renderView, type ViewEvent, type ViewState } from './dashboard.js'
import { failOver } from './live-failover.js'
import { parseQuickstartOptions, type QuickstartOptions } from './options.js'
import { type ProxyProcess, startProxyProcess } from './proxy-process.js'
import { quickstartClient } from './quickstart-redis.js'
import { runNamespace } from './run-namespace.js'
import { openRunRedis } from './run-redis.js'
import { QUICKSTART_HOT_RPS, SCENARIO } from './scenario.js'
import { StormFeed } from './storm-feed.js'

// The README's first command: a small live Heatsink cluster (two aggregator replicas, three agent processes
// driving realistic traffic, and a proxy with a plain client behind it) and a live view of what it detects and
// mitigates. Runs until Ctrl-C, or for
// --seconds=N, and stops everything it started. With --sentinel it runs on a private Sentinel deployment and fails
// it over live once the viral key is mitigated (--failover-after=N); with --cluster, on a private 3-master Cluster.

const AGENTS = 3
const STOP_TIMEOUT_MS = 20_000
const namespace = runNamespace(process.env)
let options: QuickstartOptions
try {
  options = parseQuickstartOptions(process.argv.slice(2))
} catch (error) {
  console.error(`heatsink quickstart: ${(error as Error).message}`)
  process.exit(2)
}
// NaN when not given: the run goes on until Ctrl-C.
const seconds = options.seconds ?? Number.NaN
const interactive = process.stdout.isTTY === true
// Progress from the first second: each step says what it is doing before doing it.
console.log(
  `Heatsink quickstart: starting ${options.sentinel ? 'Redis Sentinel (a primary, 2 replicas, 3 sentinels)' : options.cluster ? 'a Redis Cluster (3 masters)' : 'Redis'}, 2 aggregator replicas, 3 agent processes and a proxy...`,
)

const runRedis = await openRunRedis(namespace, { ...options, log: (message) => console.log(message) })

console.log('Starting the control plane (2 aggregator replicas, registry migrations)...')
const control: ControlPlane = await startControlPlane(runRedis.url, namespace, runRedis.cluster)
console.log('Starting the Heatsink proxy (any Redis client, in any language, can use it)...')
const proxy: ProxyProcess = await startProxyProcess(runRedis.url, namespace, runRedis.cluster)
const events: ViewEvent[] = []
const detectedAt = new Map<string, number>()
const redisBefore = new Map<string, number>()
// On a Cluster too: PUBLISH reaches every node's subscribers.
const subscriber = quickstartClient(runRedis.url)
await subscriber.subscribe(createNames(namespace).registryChannel)
subscriber.on('message', (_channel, message) => {
  const event = decodeRegistryEvent(message)
  const now = Date.now()
  if (event.type === 'demote') {
    events.push({ at: now, text: `${event.key} demoted: ${event.reason}` })
    return
  }
  const { key, mitigation, splitFactor, source } = event.entry
  // The flags are read from +0s; their promotion answers the redeploy's miss storm, not a rise in traffic.
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
      REDIS_URL: runRedis.url,
      ...(runRedis.cluster ? { HEATSINK_REDIS_CLUSTER: 'true' } : {}),
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
  `Redis: ${runRedis.label}${options.sentinel ? `; SENTINEL FAILOVER at +${options.failoverAfterSeconds}s or later, once ${SCENARIO.viral.key} is mitigated` : ''}   namespace ${namespace}   hot at ${QUICKSTART_HOT_RPS.toLocaleString('en')} req/s cluster-wide`,
  `Traffic: ${(SCENARIO.backgroundRps * AGENTS).toLocaleString('en')} req/s Zipf background over ${SCENARIO.backgroundKeys.toLocaleString('en')} keys; ${SCENARIO.viral.key} goes viral at +${SCENARIO.viral.startSeconds}s (${(SCENARIO.viral.rpsPerAgent * AGENTS).toLocaleString('en')} req/s);`,
  `  its like counter ${SCENARIO.counter.key} turns write-hot at +${SCENARIO.counter.startSeconds}s (${(SCENARIO.counter.rpsPerAgent * AGENTS).toLocaleString('en')} INCR/s); ${SCENARIO.expiring.key}, loaded from a ${SCENARIO.expiring.loadMs} ms rates service with a ${SCENARIO.expiring.ttlSeconds} s TTL, is read at ${(SCENARIO.expiring.rpsPerAgent * AGENTS).toLocaleString('en')} req/s from +${SCENARIO.expiring.startSeconds}s;`,
  `  ${SCENARIO.flags.key} is read cache-aside (GET; on a miss, load and SET with a ${SCENARIO.flags.ttlSeconds} s TTL) at ${(SCENARIO.flags.rpsPerAgent * AGENTS).toLocaleString('en')} req/s; a flags redeploy deletes it every ${SCENARIO.redeploy.deleteEveryMs} ms for ${SCENARIO.redeploy.forSeconds} s from +${SCENARIO.redeploy.startSeconds}s (and every ${SCENARIO.redeploy.everySeconds} s): a miss storm`,
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
  maybeFailOver()
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
const storms = new StormFeed()
let lastSummary = -5
const absorbedShare = new AbsorbedShare()
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
      const absorbed =
        entry.mitigation === 'local_cache'
          ? absorbedShare.update(entry.key, await replica.detection.keyStats.read(entry.key), Date.now())
          : null
      return { entry, stats, redisBefore: redisBefore.get(entry.key), absorbed }
    }),
  )
  const loads = [...databaseLoads.values()].reduce((sum, n) => sum + n, 0)
  const expiringFor = Math.max(0, elapsedSeconds - SCENARIO.expiring.startSeconds)
  const footer =
    expiringFor > 0
      ? `${SCENARIO.expiring.key}: ${loads} load(s) from the rates service in ${expiringFor} s of ${(SCENARIO.expiring.rpsPerAgent * AGENTS).toLocaleString('en')} reads/s with a ${SCENARIO.expiring.ttlSeconds} s TTL (about one per expiry; without coalescing, each expiry would send every waiting reader to the service)`
      : ''
  const base = replica.url()
  const nodes = await readNodes(base)
  if (base !== undefined) events.push(...(await storms.poll(base)))
  const state: ViewState = {
    elapsedSeconds,
    header,
    entries,
    events,
    startedAt,
    footer: [await proxiedLine(), footer].filter((line) => line !== '').join('\n'),
    ...(nodes === undefined ? {} : { nodes }),
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

// The node view as an operator reads it, from the replica's GET /nodes; nothing while it cannot answer.
async function readNodes(base: string | undefined): Promise<NodesView | undefined> {
  if (base === undefined) return undefined
  const response = await fetch(`${base}/nodes`).catch(() => undefined)
  return response?.ok === true ? ((await response.json()) as NodesView) : undefined
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
  await runRedis.close(namespace)
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

// The live failover (--sentinel): once the viral key is mitigated, so the newcomer sees it stay mitigated.
const AFTER_FAILOVER_CHECK_MS = 3000
let failoverStarted = false
function maybeFailOver(): void {
  const deployment = runRedis.sentinel
  if (deployment === undefined || failoverStarted || stopping) return
  if (Date.now() < startedAt + options.failoverAfterSeconds * 1000 || !detectedAt.has(SCENARIO.viral.key))
    return
  failoverStarted = true
  events.push({
    at: Date.now(),
    text: `Failover: SENTINEL FAILOVER ${deployment.masterName} sent to a sentinel`,
  })
  failOver(deployment).then(
    ({ from, to, switchMs }) => {
      events.push({
        at: Date.now(),
        text: `Failover: the primary moved ${from} -> ${to} (+switch-master ${(switchMs / 1000).toFixed(2)} s after the command); every component follows it`,
      })
      setTimeout(() => void afterFailover(), AFTER_FAILOVER_CHECK_MS)
    },
    (error: unknown) => events.push({ at: Date.now(), text: `Failover failed: ${(error as Error).message}` }),
  )
}

// What the newcomer should see after the switch: the key still mitigated, and the agents' reports still read.
async function afterFailover(): Promise<void> {
  const replica = control.replicas[0]
  if (replica === undefined || stopping) return
  const entry = (await replica.registry.list().catch(() => [])).find((e) => e.key === SCENARIO.viral.key)
  const stats = await replica.detection.traffic.keyStats(SCENARIO.viral.key).catch(() => undefined)
  const l1 = stats?.localCacheHitRatio
  events.push({
    at: Date.now(),
    text: `After the failover: ${SCENARIO.viral.key} ${entry === undefined ? 'is no longer in the registry' : `still ${entry.mitigation}`}, ${Math.round(stats?.requestsPerSecond ?? 0).toLocaleString('en')} req/s reported by the agents${l1 === null || l1 === undefined ? '' : `, ${(100 * l1).toFixed(1)}% from L1`}`,
  })
}
