import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '@heatsink/devservices'
import { AGGREGATOR_COMMAND, REPO_ROOT } from '@heatsink/test'
// Prometheus text parsing shared with the aggregator's own tests.
import { sampleSum } from '../../../services/aggregator/test/support/prometheus.js'

/** Where a replica finds its Redis, Postgres and namespace. */
export interface ReplicaServices {
  readonly redisUrl: string
  readonly databaseUrl: string
  readonly namespace: string
}

/** How the process ended. */
export interface ReplicaExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** performance.now() at exit. */
  readonly at: number
}

/**
 * One aggregator replica as production runs it: the built entry point (`node services/aggregator/dist/main.js`,
 * the container's command) in a process of its own, spoken to over HTTP only.
 */
export class AggregatorProcess {
  readonly port: number
  readonly exited: Promise<ReplicaExit>
  readonly #child: ChildProcess
  readonly #output: string[] = []
  #running = true

  private constructor(port: number, child: ChildProcess) {
    this.port = port
    this.#child = child
    child.stdout?.on('data', (chunk) => this.#keep(String(chunk)))
    child.stderr?.on('data', (chunk) => this.#keep(String(chunk)))
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.#running = false
        resolve({ code, signal, at: performance.now() })
      }),
    )
  }

  /** Starts a replica and waits until /readyz answers 200. `env` adds or overrides variables. */
  static async start(
    services: ReplicaServices,
    env: Record<string, string> = {},
  ): Promise<AggregatorProcess> {
    const [command, ...args] = AGGREGATOR_COMMAND
    if (!existsSync(join(REPO_ROOT, args[0] as string))) {
      throw new Error('services/aggregator is not built: run pnpm --filter @heatsink/aggregator build')
    }
    const port = await freePort()
    const child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        REDIS_URL: services.redisUrl,
        DATABASE_URL: services.databaseUrl,
        HEATSINK_NAMESPACE: services.namespace,
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const replica = new AggregatorProcess(port, child)
    const deadline = Date.now() + 30_000
    while ((await replica.status('/readyz')) !== 200) {
      if (!replica.#running || Date.now() > deadline) {
        replica.kill()
        throw new Error(`aggregator not ready on port ${port}:\n${replica.output()}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return replica
  }

  get pid(): number {
    return this.#child.pid ?? -1
  }

  get running(): boolean {
    return this.#running
  }

  /** What the process printed (the last 200 chunks). */
  output(): string {
    return this.#output.join('')
  }

  /** The HTTP status of GET `path`, or 0 when nothing answered. */
  async status(path: string): Promise<number> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.port}${path}`)
      await response.arrayBuffer()
      return response.status
    } catch {
      return 0
    }
  }

  /** GET `path`, parsed as JSON, with the status. */
  async getJson<T = unknown>(path: string): Promise<{ status: number; body: T }> {
    const response = await fetch(`http://127.0.0.1:${this.port}${path}`)
    return { status: response.status, body: (await response.json()) as T }
  }

  /** POST /hotkeys/{key}/promote; `token` when the replica has HEATSINK_API_TOKEN. */
  async promote(key: string, body: object, token?: string): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    const response = await fetch(`http://127.0.0.1:${this.port}/hotkeys/${encodeURIComponent(key)}/promote`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    })
    return { status: response.status, body: await response.json() }
  }

  /** The active registry entries' keys, as GET /hotkeys lists them. */
  async hotKeys(): Promise<string[]> {
    const { body } = await this.getJson<{ hotkeys: Array<{ key: string }> }>('/hotkeys')
    return body.hotkeys.map((entry) => entry.key)
  }

  /** The sum of the samples of a metric in GET /metrics whose labels include `labels`. */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const response = await fetch(`http://127.0.0.1:${this.port}/metrics`)
    return sampleSum(await response.text(), name, labels)
  }

  /** Sends `signal` (SIGKILL by default); nothing if the process has exited. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.#running) this.#child.kill(signal)
  }

  #keep(chunk: string): void {
    this.#output.push(chunk)
    if (this.#output.length > 200) this.#output.shift()
  }
}
