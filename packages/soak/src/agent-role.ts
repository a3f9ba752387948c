import { type ChildProcess, fork } from 'node:child_process'
import { stopChild } from './child.js'
import type { ProcessCounters, SoakProcess } from './soak-process.js'
import type { WorkerReply, WorkerRequest } from './worker-messages.js'

type Sample = Extract<WorkerReply, { type: 'sample' }>

/** An agent process (agent-worker.ts) driving its share of the traffic, asked over IPC for heap and counters. */
export class AgentRole implements SoakProcess {
  readonly role = 'agent'
  readonly name: string
  readonly #child: ChildProcess
  readonly #waiting = new Map<number, (sample: Sample) => void>()
  #nextId = 0
  #last: Sample | undefined

  private constructor(name: string, child: ChildProcess) {
    this.name = name
    this.#child = child
    child.on('message', (reply: WorkerReply) => {
      if (reply.type !== 'sample') return
      this.#last = reply
      this.#waiting.get(reply.id)?.(reply)
      this.#waiting.delete(reply.id)
    })
  }

  /** Forks the worker and waits until its Heatsink client is ready. */
  static async start(name: string, env: Record<string, string>): Promise<AgentRole> {
    const child = fork(new URL('./agent-worker.js', import.meta.url), [], {
      env: { ...process.env, ...env },
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready`)))
      child.on('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') resolve()
      })
    })
    return new AgentRole(name, child)
  }

  get pid(): number {
    return this.#child.pid ?? -1
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null
  }

  async heapBytes(): Promise<number | null> {
    return (await this.#sample())?.heapBytes ?? null
  }

  async counters(): Promise<ProcessCounters> {
    const sample = (await this.#sample()) ?? this.#last
    if (sample === undefined) return { commands: 0, errors: 0, reportsSent: 0, reportsDropped: 0, shed: 0 }
    return sample
  }

  /** Reads answered from L1 and all reads, at the last sample. */
  get l1(): { hits: number; reads: number } {
    return { hits: this.#last?.l1Hits ?? 0, reads: this.#last?.reads ?? 0 }
  }

  /** The worker's last error message, for the report. */
  get lastError(): string {
    return this.#last?.lastError ?? ''
  }

  /** Asks the worker to quit its client (its last report included), then ends it if it has not within 3 s. */
  async stop(): Promise<void> {
    if (!this.running) return
    const exited = new Promise((resolve) => this.#child.once('exit', resolve))
    this.#child.send({ type: 'stop' } satisfies WorkerRequest)
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))])
    await stopChild(this.#child, 5_000)
  }

  // A worker that does not answer within a second is counted as silent: the caller uses the last sample.
  #sample(): Promise<Sample | undefined> {
    if (!this.running) return Promise.resolve(undefined)
    const id = this.#nextId++
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id)
        resolve(undefined)
      }, 1000)
      this.#waiting.set(id, (sample) => {
        clearTimeout(timer)
        resolve(sample)
      })
      this.#child.send({ type: 'sample', id } satisfies WorkerRequest)
    })
  }
}
