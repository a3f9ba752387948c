import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { publishRegistry } from '@heatsink/agent/testing'
import { ensureRedis, freePort } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { percentile } from './harness.js'
import {
  ensureDebianBinary,
  openIdle,
  type RedisBenchmarkLoad,
  type RedisBenchmarkRun as Run,
  redisBenchmark,
  waitForPort,
} from './redis-benchmark.js'
import type { ResultRow } from './results.js'

const ROUNDS = Number(process.env.PROXY_BENCH_ROUNDS ?? 5)
const IDLE_CONNECTIONS = Number(process.env.PROXY_BENCH_IDLE_CONNECTIONS ?? 10_000)
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))
// redis-benchmark's key without -r: every request names this one key.
const HOT_KEY = 'key:__rand_int__'

interface Scenario extends RedisBenchmarkLoad {
  label: string
}

const SCENARIOS: Scenario[] = [
  { label: 'GET, cold keys (-r 100000)', test: 'get', pipeline: 1, keyspace: 100_000, requests: 60_000 },
  {
    label: 'GET, cold keys (-r 100000), -P 16',
    test: 'get',
    pipeline: 16,
    keyspace: 100_000,
    requests: 400_000,
  },
  { label: 'SET, cold keys (-r 100000)', test: 'set', pipeline: 1, keyspace: 100_000, requests: 60_000 },
  {
    label: 'SET, cold keys (-r 100000), -P 16',
    test: 'set',
    pipeline: 16,
    keyspace: 100_000,
    requests: 400_000,
  },
  {
    label: 'GET, one hot key registered local_cache',
    test: 'get',
    pipeline: 1,
    keyspace: undefined,
    requests: 60_000,
  },
  {
    label: 'GET, one hot key registered local_cache, -P 16',
    test: 'get',
    pipeline: 16,
    keyspace: undefined,
    requests: 400_000,
  },
]

type Target = 'redis' | 'nutcracker' | 'heatsink'

/**
 * The Heatsink proxy against Debian's nutcracker (twemproxy 0.5, the C proxy) and Redis itself, with
 * redis-benchmark (50 clients) in the same run on the same machine: GET and SET over 100,000 cold keys, and GET
 * of one hot key that the proxy's registry marks local_cache (answered from its L1, no backend round trip), each
 * with and without -P 16. The targets take turns in every round, the order rotating; medians over the rounds,
 * ratios taken within each round.
 * And their memory, on a pair started for it alone: RSS with no clients and with 10,000 idle client connections.
 */
export async function benchProxy(): Promise<ResultRow[]> {
  const benchmark = ensureDebianBinary('/usr/bin/redis-benchmark', 'redis-tools')
  const nutcrackerBinary = ensureDebianBinary('/usr/sbin/nutcracker', 'nutcracker')
  const redis = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  const dir = mkdtempSync(join(tmpdir(), 'heatsink-proxy-bench-'))
  const children: ChildProcess[] = []
  const admin = new Redis(redis.url)
  try {
    const redisPort = Number(new URL(redis.url).port)
    const namespace = `bench-proxy-${process.pid}`
    // Memory on processes of its own, started for it and stopped after, so that neither measurement disturbs the
    // other: measured after the throughput runs, the proxy's grown heap absorbed the new connections (one run saw
    // RSS fall as 10,000 arrived).
    const fresh = await startProxies(nutcrackerBinary, dir, redis.url, `${namespace}-memory`)
    const memory = await idleMemory(fresh.ports, fresh.pids).finally(() => fresh.stop())
    const started = await startProxies(nutcrackerBinary, dir, redis.url, namespace)
    children.push(...started.children)
    const ports: Record<Target, number> = { redis: redisPort, ...started.ports }

    await admin.set(HOT_KEY, 'xxx')
    await publishRegistry(admin, createNames(namespace), { key: HOT_KEY })
    // The proxy's agent picks the promotion up by pub/sub; give it a moment and a first read to fill L1.
    await new Promise((resolve) => setTimeout(resolve, 500))

    const runs = new Map<string, Run[]>()
    const targets: Target[] = ['redis', 'nutcracker', 'heatsink']
    for (let round = 0; round < ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target)
        for (const target of order) {
          const run = await redisBenchmark(benchmark, ports[target], scenario)
          console.error(`  ${scenario.label} via ${target}: ${format(run)}`)
          const id = `${scenario.label}|${target}`
          runs.set(id, [...(runs.get(id) ?? []), run])
        }
      }
    }

    const rows: ResultRow[] = []
    for (const scenario of SCENARIOS) {
      const of = (target: Target) => runs.get(`${scenario.label}|${target}`) ?? []
      const heatsink = summarize(of('heatsink'))
      const nut = summarize(of('nutcracker'))
      const direct = summarize(of('redis'))
      rows.push({
        benchmark: `proxy: ${scenario.label}`,
        heatsink: `${format(heatsink)} through the Heatsink proxy`,
        baseline: 'nutcracker',
        baselineFigure: format(nut),
        ratio: pairedRatio(of('heatsink'), of('nutcracker')),
        note:
          `throughput ratio (median of ${ROUNDS} per-round ratios), higher is better; Redis direct ${format(direct)}, ` +
          `itself ${pairedRatio(of('redis'), of('nutcracker')).toFixed(2)}x nutcracker, the most any server reaches ` +
          `with this client; redis-benchmark -c 50, medians of ${ROUNDS} interleaved runs`,
      })
    }

    rows.push({
      benchmark: `proxy: RSS with ${IDLE_CONNECTIONS} idle client connections`,
      heatsink: `${mib(memory.heatsink.loaded)} (${mib(memory.heatsink.idle)} with none; ${kib(memory.heatsink.perConnection)} per connection)`,
      baseline: 'nutcracker',
      baselineFigure: `${mib(memory.nutcracker.loaded)} (${mib(memory.nutcracker.idle)} with none; ${kib(memory.nutcracker.perConnection)} per connection)`,
      ratio: memory.heatsink.loaded / memory.nutcracker.loaded,
      note: 'memory ratio, lower is better',
    })
    return rows
  } finally {
    admin.disconnect()
    for (const child of children) child.kill('SIGKILL')
    await redis.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

interface StartedProxies {
  ports: Record<'heatsink' | 'nutcracker', number>
  pids: Record<'heatsink' | 'nutcracker', number>
  children: ChildProcess[]
  stop(): void
}

// nutcracker and the Heatsink proxy in front of the Redis at `redisUrl`, each listening once this resolves.
async function startProxies(
  nutcrackerBinary: string,
  dir: string,
  redisUrl: string,
  namespace: string,
): Promise<StartedProxies> {
  const redisPort = Number(new URL(redisUrl).port)
  const nutcrackerPort = await freePort()
  const config = join(dir, `nutcracker-${nutcrackerPort}.yml`)
  writeFileSync(
    config,
    `bench:\n  listen: 127.0.0.1:${nutcrackerPort}\n  redis: true\n  hash: fnv1a_64\n  distribution: ketama\n  servers:\n    - 127.0.0.1:${redisPort}:1\n`,
  )
  const nutcracker = spawn(
    nutcrackerBinary,
    ['-c', config, '-s', String(await freePort()), '-o', join(dir, `nutcracker-${nutcrackerPort}.log`)],
    { stdio: 'ignore' },
  )
  const proxyPort = await freePort()
  const proxy = spawn('node', ['services/proxy/dist/main.js'], {
    cwd: REPO_ROOT,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH,
      REDIS_URL: redisUrl,
      PORT: String(proxyPort),
      HEATSINK_PROXY_METRICS_PORT: String(await freePort()),
      HEATSINK_NAMESPACE: namespace,
      HEATSINK_PROXY_MAX_CLIENTS: String(IDLE_CONNECTIONS + 100),
      LOG_LEVEL: 'warn',
    },
  })
  const children = [nutcracker, proxy]
  const stop = () => {
    for (const child of children) child.kill('SIGKILL')
  }
  try {
    await Promise.all([waitForPort(nutcrackerPort), waitForPort(proxyPort)])
  } catch (error) {
    stop()
    throw error
  }
  return {
    ports: { nutcracker: nutcrackerPort, heatsink: proxyPort },
    pids: { nutcracker: nutcracker.pid as number, heatsink: proxy.pid as number },
    children,
    stop,
  }
}

function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  )
}

// Throughput on these shared cores drifts by a quarter within a minute; runs of one round are seconds apart and
// share the drift, so the ratio is taken within each round and the median of those reported.
function pairedRatio(runs: Run[], baselines: Run[]): number {
  return median(runs.map((run, i) => run.rps / (baselines[i]?.rps ?? Number.NaN)))
}

function summarize(runs: Run[]): Run {
  return {
    rps: median(runs.map((run) => run.rps)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
  }
}

function format(run: Run): string {
  return `${Math.round(run.rps).toLocaleString('en-US')} req/s, p50 ${run.p50.toFixed(3)} ms, p99 ${run.p99.toFixed(3)} ms`
}

interface MemoryFigures {
  idle: number
  loaded: number
  perConnection: number
}

// RSS of each proxy before and after IDLE_CONNECTIONS clients connect and send one PING each.
async function idleMemory(
  ports: Record<'heatsink' | 'nutcracker', number>,
  pids: Record<'heatsink' | 'nutcracker', number>,
): Promise<Record<'heatsink' | 'nutcracker', MemoryFigures>> {
  const result = {} as Record<'heatsink' | 'nutcracker', MemoryFigures>
  for (const target of ['heatsink', 'nutcracker'] as const) {
    const idle = rss(pids[target])
    const sockets: Socket[] = []
    try {
      for (let i = 0; i < IDLE_CONNECTIONS; i += 500) {
        const batch = Array.from({ length: Math.min(500, IDLE_CONNECTIONS - i) }, () =>
          openIdle(ports[target]),
        )
        sockets.push(...(await Promise.all(batch)))
      }
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const loaded = rss(pids[target])
      result[target] = { idle, loaded, perConnection: (loaded - idle) / IDLE_CONNECTIONS }
    } finally {
      for (const socket of sockets) socket.destroy()
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  return result
}

function rss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status)
  return Number(match?.[1] ?? 0) * 1024
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
