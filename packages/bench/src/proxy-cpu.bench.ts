import { type ChildProcess, spawn } from 'node:child_process'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { ensureRedis, freePort } from '@heatsink/devservices'
import { Redis } from 'ioredis'
import { type Build, buildsToCompare, promoteWithBuildsOwnRegistry } from './builds.js'
import { medianInterval, percentile } from './harness.js'
import { costBetween, type ProcessCost, pinToCpu, processCost } from './process-cpu.js'
import {
  ensureDebianBinary,
  type RedisBenchmarkLoad,
  redisBenchmark,
  waitForPort,
} from './redis-benchmark.js'
import type { ResultRow } from './results.js'

const ROUNDS = Number(process.env.PROXY_CPU_BENCH_ROUNDS ?? 8)
const WARMUP_ROUNDS = 1
// redis-benchmark's key without -r: every request names this one key, registered local_cache.
const HOT_KEY = 'key:__rand_int__'

interface Scenario extends RedisBenchmarkLoad {
  label: string
}

// Request counts for about a second of proxy CPU each, so a round stays short and drift within it small.
const SCENARIOS: Scenario[] = [
  { label: 'GET, cold keys (-r 100000)', test: 'get', pipeline: 1, keyspace: 100_000, requests: 60_000 },
  { label: 'SET, cold keys (-r 100000)', test: 'set', pipeline: 1, keyspace: 100_000, requests: 60_000 },
  { label: 'GET, cold keys, -P 16', test: 'get', pipeline: 16, keyspace: 100_000, requests: 300_000 },
  { label: 'SET, cold keys, -P 16', test: 'set', pipeline: 16, keyspace: 100_000, requests: 300_000 },
  { label: 'GET, one key local_cache (L1)', test: 'get', pipeline: 1, keyspace: undefined, requests: 60_000 },
  {
    label: 'GET, one key local_cache (L1), -P 16',
    test: 'get',
    pipeline: 16,
    keyspace: undefined,
    requests: 400_000,
  },
]

interface Target {
  name: string
  build: Build
  port: number
  pid: number
}

/**
 * The proxy's CPU time per request, this tree's build against a base build (`--base <dir>` or
 * HEATSINK_BENCH_BASE: a checkout after `pnpm install && pnpm build`), or against itself when none is given.
 * The noise floor is measured beside the figure: a second process of the base build is loaded exactly as the
 * others, and its ratio to the first (A/A) is what the same code scores. On a shared 2-core machine: each proxy
 * pinned to the second core and Redis and redis-benchmark to the first, one proxy loaded at a time, the order
 * rotating per round, CPU read from /proc (every thread, user and kernel) around a fixed number of requests;
 * ratios are taken within a round and the median over rounds reported with its bootstrap 95% interval.
 */
export async function benchProxyCpu(): Promise<ResultRow[]> {
  const benchmark = ensureDebianBinary('/usr/bin/redis-benchmark', 'redis-tools')
  const { now, base } = buildsToCompare()
  const reference = base ?? now
  const [loadCpu, proxyCpu] = cpus().length >= 2 ? [0, cpus().length - 1] : [undefined, undefined]
  const pinned = loadCpu === undefined ? [] : ['taskset', '-c', String(loadCpu)]
  const redis = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  const admin = new Redis(redis.url)
  const children: ChildProcess[] = []
  try {
    if (loadCpu !== undefined) pinToCpu(await redisPid(admin), loadCpu)
    await admin.set(HOT_KEY, 'xxx')
    const builds = [
      { name: `${reference.name} (A)`, build: reference },
      { name: `${reference.name} (A again)`, build: reference },
      ...(base === undefined ? [] : [{ name: now.name, build: now }]),
    ]
    const targets: Target[] = []
    for (const [i, { name, build }] of builds.entries()) {
      const started = await startProxy(
        build,
        redis.url,
        `bench-proxy-cpu-${process.pid}-${i}`,
        proxyCpu,
        admin,
      )
      children.push(started.child)
      targets.push({ name, build, port: started.port, pid: started.child.pid as number })
    }

    const costs = new Map<string, ProcessCost[]>()
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target)
        for (const target of order) {
          const before = processCost(target.pid)
          await redisBenchmark(benchmark, target.port, scenario, pinned)
          const cost = costBetween(before, processCost(target.pid))
          console.error(`  ${scenario.label} via ${target.name}: ${perRequest(cost, scenario.requests)}`)
          if (round < WARMUP_ROUNDS) continue
          const id = `${scenario.label}|${target.name}`
          costs.set(id, [...(costs.get(id) ?? []), cost])
        }
      }
    }

    return SCENARIOS.map((scenario) => {
      const of = (target: Target | undefined) => costs.get(`${scenario.label}|${target?.name}`) ?? []
      const [a, again, measured] = [targets[0], targets[1], targets[2] ?? targets[1]]
      const ratio = pairedRatios(of(measured), of(a))
      const control = pairedRatios(of(again), of(a))
      return {
        benchmark: `proxy CPU per request: ${scenario.label}`,
        heatsink: `${perRequest(medianCost(of(measured)), scenario.requests)} (${measured?.name})`,
        baseline: base === undefined ? 'itself, a second process (A/A)' : `base ${reference.name}`,
        baselineFigure: perRequest(medianCost(of(a)), scenario.requests),
        ratio: ratio.median,
        note:
          `CPU ratio, lower is better: median of ${ROUNDS} per-round ratios, 95% interval ${interval(ratio)}; ` +
          `noise floor, a second process of ${reference.name} against the first: ${control.median.toFixed(3)}x ` +
          `(${interval(control)}); proxies pinned to CPU ${proxyCpu ?? 'any'}, Redis and redis-benchmark -c 50 ` +
          `to CPU ${loadCpu ?? 'any'}`,
      }
    })
  } finally {
    admin.disconnect()
    for (const child of children) child.kill('SIGKILL')
    await redis.stop()
  }
}

async function startProxy(
  build: Build,
  redisUrl: string,
  namespace: string,
  cpu: number | undefined,
  admin: Redis,
): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort()
  const command = ['node', join(build.dir, 'services/proxy/dist/main.js')]
  const [file, ...args] = (cpu === undefined ? command : ['taskset', '-c', String(cpu), ...command]) as [
    string,
    ...string[],
  ]
  // taskset execs node, so the child's pid is the proxy's own.
  const child = spawn(file, args, {
    cwd: build.dir,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH,
      REDIS_URL: redisUrl,
      PORT: String(port),
      HEATSINK_PROXY_METRICS_PORT: String(await freePort()),
      HEATSINK_NAMESPACE: namespace,
      LOG_LEVEL: 'warn',
    },
  })
  try {
    await waitForPort(port)
    // The first rounds are discarded, so no wait for the promotion beyond the publisher's own.
    await promoteWithBuildsOwnRegistry(build, admin, namespace, HOT_KEY)
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  return { child, port }
}

async function redisPid(admin: Redis): Promise<number> {
  const info = await admin.info('server')
  return Number(/^process_id:(\d+)/m.exec(info)?.[1])
}

function pairedRatios(costs: ProcessCost[], baselines: ProcessCost[]) {
  return medianInterval(costs.map((cost, i) => cost.cpuNs / (baselines[i]?.cpuNs ?? Number.NaN)))
}

function medianCost(costs: ProcessCost[]): ProcessCost {
  const median = (values: number[]) =>
    percentile(
      values.sort((a, b) => a - b),
      0.5,
    )
  return {
    cpuNs: median(costs.map((cost) => cost.cpuNs)),
    readCalls: median(costs.map((cost) => cost.readCalls)),
    writeCalls: median(costs.map((cost) => cost.writeCalls)),
  }
}

function perRequest(cost: ProcessCost, requests: number): string {
  const calls = `${(cost.readCalls / requests).toFixed(2)} reads, ${(cost.writeCalls / requests).toFixed(2)} writes`
  return `${(cost.cpuNs / requests / 1000).toFixed(2)} µs (${calls} per request)`
}

const interval = (figure: { low: number; high: number }) =>
  `${figure.low.toFixed(3)}-${figure.high.toFixed(3)}x`
