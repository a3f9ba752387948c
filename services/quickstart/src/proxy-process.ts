import { type ChildProcess, fork } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { freePort, isPortFree } from '@heatsink/devservices'

/** The quickstart's Heatsink proxy: a process of its own, as it is deployed, in front of the run's Redis. */
export interface ProxyProcess {
  /** The RESP port clients connect to instead of Redis's. */
  readonly port: number
  /** The preferred port (6380) was taken, and `port` was chosen instead. */
  readonly fellBack: boolean
  /** GETs the proxy received, and those of `key` it answered from its L1: one scrape of its /metrics. */
  reads(key: string): Promise<{ gets: number; servedFromL1: number }>
  stop(): Promise<void>
}

const PREFERRED_PORT = 6380
const READY_TIMEOUT_MS = 20_000

/** Starts `node services/proxy/dist/main.js` (the proxy's one command) and waits until it is healthy. */
export async function startProxyProcess(
  redisUrl: string,
  namespace: string,
  cluster: boolean,
): Promise<ProxyProcess> {
  const fellBack = !(await isPortFree(PREFERRED_PORT))
  const port = fellBack ? await freePort() : PREFERRED_PORT
  const metricsPort = await freePort()
  // The package's entry is dist/index.js; its command, main.js, sits beside it.
  const main = join(dirname(createRequire(import.meta.url).resolve('@heatsink/proxy')), 'main.js')
  const child = fork(main, [], {
    env: {
      ...process.env,
      REDIS_URL: redisUrl,
      ...(cluster ? { HEATSINK_PROXY_CLUSTER: 'true' } : {}),
      PORT: String(port),
      HEATSINK_PROXY_METRICS_PORT: String(metricsPort),
      HEATSINK_NAMESPACE: namespace,
      HEATSINK_AGENT_ID: `quickstart-proxy-${process.pid}`,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  const metricsUrl = `http://127.0.0.1:${metricsPort}`
  await untilHealthy(child, metricsUrl)
  return {
    port,
    fellBack,
    async reads(key) {
      const lines = (await (await fetch(`${metricsUrl}/metrics`)).text()).split('\n')
      const sample = (series: string) => {
        const line = lines.find((l) => l.startsWith(`${series} `))
        return line === undefined ? 0 : Number(line.slice(series.length + 1))
      }
      return {
        gets: sample('heatsink_proxy_commands_total{command="get"}'),
        servedFromL1: sample(`heatsink_proxy_hot_key_l1_served_total{key=${JSON.stringify(key)}}`),
      }
    },
    async stop() {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    },
  }
}

async function untilHealthy(child: ChildProcess, metricsUrl: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the proxy exited with code ${child.exitCode} before it was healthy`)
    const healthy = await fetch(`${metricsUrl}/healthz`).then(
      (response) => response.ok,
      () => false,
    )
    if (healthy) return
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the proxy was not healthy within ${READY_TIMEOUT_MS / 1000} s`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
