import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { freePort } from '@heatsink/devservices'
import { countErrorLines, stopChild } from './child.js'
import { NO_COUNTERS, type ProcessCounters, type SoakProcess } from './soak-process.js'

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))
// The container's start command (deploy/aggregator.Dockerfile), run from the repository root.
const ENTRY = 'services/aggregator/dist/main.js'

/** Sum of every sample of `name` in Prometheus text, whatever its labels. */
function metricTotal(text: string, name: string): number {
  let sum = 0
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}

/** An aggregator replica: the built entry point in its own process, read through /metrics. */
export class AggregatorRole implements SoakProcess {
  readonly role = 'aggregator'
  readonly name: string
  readonly #child: ChildProcess
  readonly #port: number
  readonly #errorLines: () => number

  private constructor(name: string, child: ChildProcess, port: number) {
    this.name = name
    this.#child = child
    this.#port = port
    this.#errorLines = countErrorLines(child, (line) => console.error(`[${name}] ${line}`))
  }

  /** Starts a replica and waits until /readyz answers 200. */
  static async start(name: string, env: Record<string, string>): Promise<AggregatorRole> {
    if (!existsSync(`${REPO_ROOT}${ENTRY}`)) throw new Error(`${ENTRY} is missing: run pnpm build first`)
    const port = await freePort()
    const child = spawn('node', [ENTRY], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const role = new AggregatorRole(name, child, port)
    const deadline = Date.now() + 30_000
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      )
      if (ready === 200) return role
      if (!role.running || Date.now() > deadline) {
        await stopChild(child)
        throw new Error(`${name} did not become ready`)
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  get pid(): number {
    return this.#child.pid ?? -1
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null
  }

  async heapBytes(): Promise<number | null> {
    const text = await this.#metrics()
    return text === null ? null : metricTotal(text, 'nodejs_heap_size_used_bytes')
  }

  async counters(): Promise<ProcessCounters> {
    const text = await this.#metrics()
    if (text === null) return { ...NO_COUNTERS, errors: this.#errorLines() }
    const failures =
      metricTotal(text, 'heatsink_registry_write_failures_total') +
      metricTotal(text, 'heatsink_promotions_abandoned_total') +
      metricTotal(text, 'heatsink_dead_letter_total')
    return { ...NO_COUNTERS, errors: this.#errorLines() + failures }
  }

  /** Registry events this replica published, by type (promote, update, demote): the hot keys coming and going. */
  async registryEvents(): Promise<Record<string, number>> {
    const text = (await this.#metrics()) ?? ''
    const events: Record<string, number> = {}
    for (const match of text.matchAll(/^heatsink_registry_events_published_total\{type="(\w+)"\} (\S+)$/gm)) {
      events[match[1] as string] = Number(match[2])
    }
    return events
  }

  stop(): Promise<void> {
    return stopChild(this.#child)
  }

  async #metrics(): Promise<string | null> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.#port}/metrics`)
      return await response.text()
    } catch {
      return null
    }
  }
}
