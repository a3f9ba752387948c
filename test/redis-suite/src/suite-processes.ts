import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, pingRedis, ServerProcess, startRedisProcess, waitUntil } from '@heatsink/devservices'

/** The repository root (this file is in test/redis-suite/src, or dist once built). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

const PROXY_MAIN = 'services/proxy/dist/main.js'
const AGGREGATOR_MAIN = 'services/aggregator/dist/main.js'
// A node process on a busy two-core machine has taken 30 s just to load its modules.
const START_TIMEOUT_MS = 120_000

/** A process the harness started, stopped by stop() and checked for an early death by crashed(). */
export interface SuiteProcess {
  readonly name: string
  readonly port: number
  /** What the process printed last, when it exited while it should have been running; null while it runs. */
  crashed(): string | null
  stop(): Promise<void>
}

/** A private redis-server on a free port, as the suite needs it (DEBUG allowed, nothing on disk). */
export async function startSuiteRedis(): Promise<SuiteProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'heatsink-redis-suite-'))
  try {
    const { port, process } = await startRedisProcess({
      binary: 'redis-server',
      dir,
      service: 'redis',
      timeoutMs: START_TIMEOUT_MS,
      extraArgs: () => ['--enable-debug-command', 'yes'],
    })
    return watched('redis-server', port, process, () => rmSync(dir, { recursive: true, force: true }))
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
}

/**
 * The built proxy (`node services/proxy/dist/main.js`) on a free port in front of the Redis at `redisPort`, its
 * agent's streams and channels on the control Redis at `controlPort`.
 */
export function startProxy(
  redisPort: number,
  controlPort: number,
  namespace: string,
): Promise<SuiteProcess & { readonly metricsPort: number }> {
  return onFreshPorts(() => startProxyOnce(redisPort, controlPort, namespace))
}

async function startProxyOnce(
  redisPort: number,
  controlPort: number,
  namespace: string,
): Promise<SuiteProcess & { readonly metricsPort: number }> {
  const port = await freePort()
  const metricsPort = await freePort()
  const env = {
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    HEATSINK_CONTROL_REDIS_URL: `redis://127.0.0.1:${controlPort}`,
    PORT: String(port),
    HEATSINK_PROXY_METRICS_PORT: String(metricsPort),
    HEATSINK_NAMESPACE: namespace,
    LOG_LEVEL: 'warn',
  }
  const process = startNode('proxy', PROXY_MAIN, env)
  const ready = await waitUntil(() => pingRedis(`redis://127.0.0.1:${port}`, 500).then(() => true), {
    timeoutMs: START_TIMEOUT_MS,
    giveUp: () => process.hasExited,
  })
  return { ...(await readyOrStopped('proxy', port, process, ready)), metricsPort }
}

/**
 * The built aggregator on a free port, on the control Redis at `controlPort` and the Postgres at `databaseUrl`, ready
 * when /readyz is.
 */
export function startAggregator(
  controlPort: number,
  databaseUrl: string,
  namespace: string,
  settings: Record<string, string>,
): Promise<SuiteProcess> {
  return onFreshPorts(() => startAggregatorOnce(controlPort, databaseUrl, namespace, settings))
}

async function startAggregatorOnce(
  controlPort: number,
  databaseUrl: string,
  namespace: string,
  settings: Record<string, string>,
): Promise<SuiteProcess> {
  const port = await freePort()
  const env = {
    HEATSINK_CONTROL_REDIS_URL: `redis://127.0.0.1:${controlPort}`,
    DATABASE_URL: databaseUrl,
    HEATSINK_NAMESPACE: namespace,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    ...settings,
  }
  const process = startNode('aggregator', AGGREGATOR_MAIN, env)
  const ready = await waitUntil(
    () => fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.status === 200),
    { timeoutMs: START_TIMEOUT_MS, intervalMs: 100, giveUp: () => process.hasExited },
  )
  return readyOrStopped('aggregator', port, process, ready)
}

// A port found free can be taken before the process listens on it (another test's server, an outgoing connection's
// ephemeral port): that start is tried again on new ports, up to three times in all.
async function onFreshPorts<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start()
    } catch (error) {
      if (attempt >= 3 || !(error as Error).message.includes('EADDRINUSE')) throw error
    }
  }
}

function startNode(name: string, main: string, env: Record<string, string>): ServerProcess {
  if (!existsSync(join(REPO_ROOT, main))) throw new Error(`${name} is not built: run pnpm build (${main})`)
  return new ServerProcess(process.execPath, [main], REPO_ROOT, { PATH: process.env.PATH, ...env })
}

async function readyOrStopped(
  name: string,
  port: number,
  server: ServerProcess,
  ready: boolean,
): Promise<SuiteProcess> {
  if (ready) return watched(name, port, server)
  await server.stop()
  throw new Error(`${name} did not start on port ${port}: ${server.line}\n${server.output()}`)
}

function watched(name: string, port: number, server: ServerProcess, after = () => {}): SuiteProcess {
  let stopping = false
  return {
    name,
    port,
    crashed: () => (server.hasExited && !stopping ? server.output() : null),
    async stop() {
      stopping = true
      await server.stop()
      after()
    },
  }
}
