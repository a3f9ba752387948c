import { randomBytes } from 'node:crypto'
import { ensurePostgres, ensureRedis, freePort, type RunningService } from '@heatsink/devservices'
import { AgentRole } from './agent-role.js'
import { AggregatorRole } from './aggregator-role.js'
import { parseSoakOptions, warmUpSeconds } from './options.js'
import { residentBytes } from './proc-memory.js'
import type { MemorySample } from './slope.js'
import type { ProcessCounters, SoakProcess } from './soak-process.js'
import { printSummary, sampleLine } from './soak-report.js'

// pnpm soak -- --minutes=N [--agents=4 --rate=18000 --sampleSeconds=5]: two aggregator replicas and agent
// processes under mixed traffic on a private redis-server and Postgres, their memory sampled over time.

const options = parseSoakOptions(process.argv.slice(2))
const warmUp = warmUpSeconds(options)
const services: RunningService[] = []
const processes: SoakProcess[] = []
let interrupted = false
process.on('SIGINT', () => {
  interrupted = true
})

async function stopAll(): Promise<void> {
  // Agents first (their last reports), then the replicas, then the servers.
  await Promise.all(processes.filter((p) => p.role !== 'aggregator').map((p) => p.stop()))
  await Promise.all(processes.filter((p) => p.role === 'aggregator').map((p) => p.stop()))
  await Promise.all(services.map((service) => service.stop()))
}

try {
  // Private servers on free ports: the soak fills Redis and must not share it with anyone's tests.
  const redis = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  services.push(redis)
  const postgres = await ensurePostgres({ url: `postgres://postgres@127.0.0.1:${await freePort()}/soak` })
  services.push(postgres)
  const namespace = `heatsink-soak-${randomBytes(4).toString('hex')}`
  const common = {
    REDIS_URL: redis.url,
    DATABASE_URL: postgres.url,
    HEATSINK_NAMESPACE: namespace,
    HEATSINK_HOT_RPS: '2000',
    // Short, so every burst is demoted before the next cycle and the registry keeps turning over.
    HEATSINK_COOL_SECONDS: '10',
  }
  const replicas: AggregatorRole[] = []
  for (const i of [1, 2]) {
    replicas.push(
      await AggregatorRole.start(`aggregator-${i}`, { ...common, HEATSINK_REPLICA_ID: `soak-replica-${i}` }),
    )
  }
  processes.push(...replicas)
  const startedAt = Date.now()
  const agents = await Promise.all(
    Array.from({ length: options.agents }, (_, i) =>
      AgentRole.start(`agent-${i + 1}`, {
        REDIS_URL: redis.url,
        SOAK_NAMESPACE: namespace,
        SOAK_AGENT_INDEX: String(i),
        SOAK_RATE: String(options.rate / options.agents),
        SOAK_STARTED_AT: String(startedAt),
      }),
    ),
  )
  processes.push(...agents)
  console.log(
    `soak: ${options.minutes} min, ${processes.length} processes (${processes.map((p) => `${p.name} pid ${p.pid}`).join(', ')}), ` +
      `${options.rate} commands/s aimed, redis ${redis.url}, warm-up ${warmUp} s`,
  )

  const samples = new Map<string, MemorySample[]>(processes.map((p) => [p.name, []]))
  const latest = new Map<string, MemorySample>()
  const counters = new Map<string, ProcessCounters>()
  const agentCommands = async () => {
    let sum = 0
    for (const agent of agents) sum += (await agent.counters()).commands
    return sum
  }
  let measuredFrom: { at: number; commands: number } | undefined
  const printEvery = Math.max(1, Math.round(30 / options.sampleSeconds))
  const endAt = startedAt + options.minutes * 60_000
  for (let round = 0; Date.now() < endAt && !interrupted; round++) {
    await new Promise((resolve) => setTimeout(resolve, options.sampleSeconds * 1000))
    const atSeconds = (Date.now() - startedAt) / 1000
    await Promise.all(
      processes.map(async (p) => {
        const [rssBytes, heapBytes] = await Promise.all([residentBytes(p.pid), p.heapBytes()])
        if (rssBytes === null) return
        const sample = { atSeconds, rssBytes, heapBytes }
        samples.get(p.name)?.push(sample)
        latest.set(p.name, sample)
      }),
    )
    if (measuredFrom === undefined && atSeconds >= warmUp)
      measuredFrom = { at: Date.now(), commands: await agentCommands() }
    if (round % printEvery === printEvery - 1) console.log(sampleLine(atSeconds, processes, latest))
    if (processes.some((p) => !p.running)) break
  }

  const endCommands = await agentCommands()
  const endedAt = Date.now()
  const exitedEarly = processes.filter((p) => !p.running).map((p) => p.name)
  for (const p of processes) counters.set(p.name, await p.counters())
  await Promise.all(agents.map((agent) => agent.stop()))
  const notes = agents.filter((a) => a.lastError !== '').map((a) => `${a.name} last error: ${a.lastError}`)
  // Evidence that the hot keys came and went: promotions and demotions published, and L1 serving them.
  const events: Record<string, number> = {}
  for (const replica of replicas) {
    for (const [type, count] of Object.entries(await replica.registryEvents()))
      events[type] = (events[type] ?? 0) + count
  }
  notes.push(`registry events published: ${JSON.stringify(events)}`)
  const hits = agents.reduce((sum, a) => sum + a.l1.hits, 0)
  const reads = agents.reduce((sum, a) => sum + a.l1.reads, 0)
  notes.push(`L1 hits: ${hits} of ${reads} reads (${((hits / Math.max(1, reads)) * 100).toFixed(1)}%)`)
  const from = measuredFrom ?? { at: startedAt, commands: 0 }
  const missed = printSummary({
    processes,
    samples,
    counters,
    warmUpSeconds: warmUp,
    commandsPerSecond: ((endCommands - from.commands) * 1000) / Math.max(1, endedAt - from.at),
    notes,
    exitedEarly,
  })
  await stopAll()
  process.exit(missed.length === 0 ? 0 : 1)
} catch (error) {
  console.error(`soak failed: ${error instanceof Error ? error.stack : String(error)}`)
  await stopAll()
  process.exit(2)
}
