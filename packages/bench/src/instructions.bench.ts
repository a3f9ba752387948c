import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { ensureRedis, freePort } from '@heatsink/devservices'
import { Redis } from 'ioredis'
import { type Build, buildsToCompare, promoteWithBuildsOwnRegistry } from './builds.js'
import { type CallgrindProcess, startUnderCallgrind } from './callgrind.js'
import { medianInterval } from './harness.js'
import {
  ensureDebianBinary,
  type RedisBenchmarkLoad,
  redisBenchmark,
  waitForPort,
} from './redis-benchmark.js'
import type { ResultRow } from './results.js'

const ROUNDS = Number(process.env.INSTRUCTIONS_BENCH_ROUNDS ?? 15)
// V8 compiles the hot paths over the first windows (the count falls from 110k to 13k per request over 10).
const WARMUP_ROUNDS = Number(process.env.INSTRUCTIONS_BENCH_WARMUP ?? 12)
const HOT_KEY = 'key:__rand_int__'
// A part of each scenario's label, to run only those (INSTRUCTIONS_BENCH_ONLY='SET|L1'); every one by default.
const ONLY = process.env.INSTRUCTIONS_BENCH_ONLY
// Set: the proxies run with V8's perf map and the last round's windows print where the instructions went, per
// function, base beside this tree (how a difference is traced to its code).
const PROFILE = process.env.INSTRUCTIONS_BENCH_PROFILE !== undefined
const DRIVER = fileURLToPath(new URL('./front-door-driver.js', import.meta.url))

interface Scenario {
  label: string
  requests: number
  /** Runs one window of the scenario against one build's processes. */
  run(side: Side): Promise<void>
}

/** One build's processes under callgrind: a proxy, and a drop-in client driven window by window. */
interface Side {
  name: string
  build: Build
  proxy: CallgrindProcess
  proxyPort: number
  driver: CallgrindProcess
  nextLine: () => Promise<string>
  target: 'proxy' | 'driver'
}

const proxyLoad = (load: RedisBenchmarkLoad): Pick<Scenario, 'requests' | 'run'> => ({
  requests: load.requests,
  run: (side) =>
    redisBenchmark(ensureDebianBinary('/usr/bin/redis-benchmark', 'redis-tools'), side.proxyPort, {
      ...load,
      // One client: the batching, and so the system calls per request, are the same for every build.
      clients: 1,
    }).then(() => {}),
})

const SCENARIOS: (Scenario & { target: Side['target'] })[] = [
  {
    label: 'proxy GET, cold keys, -P 16',
    target: 'proxy',
    ...proxyLoad({ test: 'get', pipeline: 16, keyspace: 100_000, requests: 6000 }),
  },
  {
    label: 'proxy SET, cold keys, -P 16',
    target: 'proxy',
    ...proxyLoad({ test: 'set', pipeline: 16, keyspace: 100_000, requests: 6000 }),
  },
  {
    label: 'proxy GET, cold keys, one at a time',
    target: 'proxy',
    ...proxyLoad({ test: 'get', pipeline: 1, keyspace: 100_000, requests: 1500 }),
  },
  {
    label: 'proxy GET, one key local_cache (L1), -P 16',
    target: 'proxy',
    ...proxyLoad({ test: 'get', pipeline: 16, keyspace: undefined, requests: 6000 }),
  },
  {
    label: 'front door GET, one key not in the registry, 1,000 concurrent',
    target: 'driver',
    ...driverLoad('one', 6000),
  },
  {
    label: 'front door GET, spread over 10,000 keys, 1,000 concurrent',
    target: 'driver',
    ...driverLoad('spread', 6000),
  },
  {
    label: 'front door GET, spread over 10,000 keys, one at a time',
    target: 'driver',
    ...driverLoad('awaited', 1500),
  },
]

function driverLoad(workload: string, requests: number): Pick<Scenario, 'requests' | 'run'> {
  return { requests, run: (side) => tellDriver(side, workload) }
}

async function tellDriver(side: Side, workload: string): Promise<void> {
  side.driver.child.stdin?.write(`${workload}\n`)
  const line = await side.nextLine()
  if (line !== 'done') throw new Error(`front-door driver of ${side.name} answered ${line}`)
}

/**
 * Instructions per request of the proxy and of the drop-in front door, this tree against a base build (or
 * itself), counted by callgrind: on a shared 2-core VM CPU time moves by 10-20% between identical runs
 * (proxy-cpu's A/A row), while a window's instruction count moves by about 1%, so a 2% question has an answer.
 * Three builds are loaded alike, one window at a time, the order rotating per round: the base (A), the base
 * again (A again, the floor: what identical code scores), and this tree. User-space instructions only; the
 * system calls per request are the same for every build here because each load uses one connection.
 */
export async function benchInstructions(): Promise<ResultRow[]> {
  const { now, base } = buildsToCompare()
  const reference = base ?? now
  const redis = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  const admin = new Redis(redis.url)
  const sides: Side[] = []
  try {
    await admin.set(HOT_KEY, 'xxx')
    const writes = admin.pipeline()
    const builds = [
      { name: `${reference.name} (A)`, build: reference },
      { name: `${reference.name} (A again)`, build: reference },
      ...(base === undefined ? [] : [{ name: now.name, build: now }]),
    ]
    for (const [i, { name, build }] of builds.entries()) {
      const namespace = `bench-instructions-${process.pid}-${i}`
      for (let k = 0; k < 10_000; k++) writes.set(`${namespace}:item:${k}`, `value of item ${k}`)
      sides.push(await startSide(name, build, redis.url, namespace, admin))
    }
    await writes.exec()

    const counts = new Map<string, number[]>()
    const profiles = new Map<string, Map<string, number>>()
    const scenarios = SCENARIOS.filter(
      (scenario) => ONLY === undefined || ONLY.split('|').some((part) => scenario.label.includes(part)),
    )
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      for (const scenario of scenarios) {
        for (const [i] of sides.entries()) {
          const side = sides[(i + round) % sides.length] as Side
          const counted = scenario.target === 'proxy' ? side.proxy : side.driver
          const instructions = await counted.count(() => scenario.run(side))
          // Outside every window: the driver's heap collected, so no window pays for an earlier one's garbage.
          if (scenario.target === 'driver') await tellDriver(side, 'gc')
          console.error(`  ${scenario.label} via ${side.name}: ${perRequest(instructions, scenario)}`)
          if (round < WARMUP_ROUNDS) continue
          if (PROFILE && round === WARMUP_ROUNDS + ROUNDS - 1 && scenario.target === 'proxy') {
            profiles.set(`${scenario.label}|${side.name}`, side.proxy.functions())
          }
          const id = `${scenario.label}|${side.name}`
          counts.set(id, [...(counts.get(id) ?? []), instructions])
        }
      }
    }

    if (PROFILE) {
      for (const scenario of scenarios.filter((each) => each.target === 'proxy')) {
        printProfiles(scenario, sides[0] as Side, sides[sides.length - 1] as Side, profiles)
      }
    }
    return scenarios.map((scenario) => {
      const of = (side: Side | undefined) => counts.get(`${scenario.label}|${side?.name}`) ?? []
      const [a, again, measured] = [sides[0], sides[1], sides[2] ?? sides[1]]
      const ratio = pairedRatios(of(measured), of(a))
      const control = pairedRatios(of(again), of(a))
      return {
        benchmark: `instructions per request: ${scenario.label}`,
        heatsink: `${perRequest(median(of(measured)), scenario)} (${measured?.name})`,
        baseline: base === undefined ? 'itself, a second process (A/A)' : `base ${reference.name}`,
        baselineFigure: perRequest(median(of(a)), scenario),
        ratio: ratio.median,
        note:
          `callgrind instruction ratio, lower is better: median of ${ROUNDS} per-round ratios, 95% interval ` +
          `${interval(ratio)}; noise floor (a second process of ${reference.name} against the first): ` +
          `${control.median.toFixed(3)}x (${interval(control)})`,
      }
    })
  } finally {
    for (const side of sides) {
      side.proxy.stop()
      side.driver.stop()
    }
    admin.disconnect()
    await redis.stop()
  }
}

async function startSide(
  name: string,
  build: Build,
  redisUrl: string,
  namespace: string,
  admin: Redis,
): Promise<Side> {
  const proxyPort = await freePort()
  const env = { PATH: process.env.PATH, LOG_LEVEL: 'warn' }
  const proxy = startUnderCallgrind(join(build.dir, 'services/proxy/dist/main.js'), [], {
    cwd: build.dir,
    profile: PROFILE,
    env: {
      ...env,
      REDIS_URL: redisUrl,
      PORT: String(proxyPort),
      HEATSINK_PROXY_METRICS_PORT: String(await freePort()),
      HEATSINK_NAMESPACE: namespace,
    },
  })
  const driver = startUnderCallgrind(DRIVER, [build.dir, redisUrl, `${namespace}-front-door`], {
    cwd: build.dir,
    env,
    stdio: 'pipe',
    nodeFlags: ['--expose-gc'],
  })
  const lines = createInterface({ input: driver.child.stdout as NodeJS.ReadableStream })[
    Symbol.asyncIterator
  ]()
  const nextLine = async () => {
    const { value, done } = await lines.next()
    if (done) throw new Error(`front-door driver of ${name} exited`)
    return value as string
  }
  // Node under valgrind starts in 20-40 s on this VM; waitForPort gives up after 15 s, so it is asked again.
  for (let attempt = 0; ; attempt++) {
    try {
      await waitForPort(proxyPort)
      break
    } catch (error) {
      if (attempt === 8) throw error
    }
  }
  await promoteWithBuildsOwnRegistry(build, admin, namespace, HOT_KEY)
  if ((await nextLine()) !== 'ready') throw new Error(`front-door driver of ${name} did not start`)
  return { name, build, proxy, proxyPort, driver, nextLine, target: 'proxy' }
}

function pairedRatios(counts: number[], baselines: number[]) {
  return medianInterval(counts.map((count, i) => count / (baselines[i] ?? Number.NaN)))
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const perRequest = (instructions: number, scenario: Scenario) =>
  `${Math.round(instructions / scenario.requests).toLocaleString('en-US')} instructions`

const interval = (figure: { low: number; high: number }) =>
  `${figure.low.toFixed(3)}-${figure.high.toFixed(3)}x`

// The functions whose self instructions per request differ most between the base and this tree.
function printProfiles(
  scenario: Scenario,
  base: Side,
  now: Side,
  profiles: Map<string, Map<string, number>>,
): void {
  const perFunction = (side: Side) => {
    const merged = new Map<string, number>()
    for (const [name, cost] of profiles.get(`${scenario.label}|${side.name}`) ?? []) {
      const key = comparableName(name, side.build.dir)
      merged.set(key, (merged.get(key) ?? 0) + cost / scenario.requests)
    }
    return merged
  }
  const [before, after] = [perFunction(base), perFunction(now)]
  const rows = [...new Set([...before.keys(), ...after.keys()])]
    .map((name) => ({ name, before: before.get(name) ?? 0, after: after.get(name) ?? 0 }))
    .sort((a, b) => Math.abs(b.after - b.before) - Math.abs(a.after - a.before))
    .slice(0, 40)
  console.error(`\n${scenario.label}: self instructions per request, ${base.name} -> ${now.name}`)
  for (const row of rows) {
    const delta = row.after - row.before
    console.error(
      `${row.before.toFixed(0).padStart(7)} ${row.after.toFixed(0).padStart(7)} ${delta >= 0 ? '+' : ''}${delta.toFixed(0).padStart(6)}  ${row.name}`,
    )
  }
}

// A perf map name without its build's directory, its line and column, or V8's tier mark, so builds compare.
function comparableName(name: string, buildDir: string): string {
  return name
    .split(buildDir.replace(/\/$/, ''))
    .join('')
    .replace(/:\d+:\d+$/, '')
    .replace(/^(\w+:)[*~^+]/, '$1')
}
