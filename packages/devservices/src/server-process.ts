import { type ChildProcess, spawn } from 'node:child_process'
import { commandLine } from './command-line.js'
import { onProcessExit } from './exit-cleanup.js'
import { OutputTail } from './output-tail.js'

// A server that ignores SIGTERM this long is stuck; SIGKILL loses nothing since private servers keep no data.
const STOP_GRACE_MS = 5_000

/** A long-running server started as a child of this process, killed when this process exits. */
export class ServerProcess {
  /** The command as a shell-readable line. */
  readonly line: string
  /** Resolves with the exit code (null on a signal) once the process has exited. */
  readonly exited: Promise<number | null>
  readonly #child: ChildProcess
  readonly #output = new OutputTail()
  #hasExited = false

  /** `env`: the child's whole environment; default this process's. */
  constructor(command: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv) {
    this.line = commandLine(command, args)
    this.#child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    this.#child.stdout?.on('data', (chunk: Buffer) => this.#output.append(chunk))
    this.#child.stderr?.on('data', (chunk: Buffer) => this.#output.append(chunk))
    const forget = onProcessExit(() => this.killNow())
    this.exited = new Promise((resolve) => {
      this.#child.once('error', (error) => {
        this.#output.append(`${error.message}\n`)
        this.#hasExited = true
        forget()
        resolve(null)
      })
      this.#child.once('exit', (code) => {
        this.#hasExited = true
        forget()
        resolve(code)
      })
    })
  }

  /** Whether the process has already exited (or never started). */
  get hasExited(): boolean {
    return this.#hasExited
  }

  /** What the process printed, last part only. */
  output(): string {
    return this.#output.toString()
  }

  /** Lets this process exit while the server still runs; the exit hook, not the event loop, then ends it. */
  unref(): void {
    this.#child.unref()
    for (const stream of [this.#child.stdout, this.#child.stderr]) {
      ;(stream as { unref?: () => void } | null)?.unref?.()
    }
  }

  /** Ends the server with SIGTERM, escalating to SIGKILL if it lingers. */
  async stop(): Promise<void> {
    if (this.#hasExited) return
    this.#child.kill('SIGTERM')
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), STOP_GRACE_MS)
    try {
      await this.exited
    } finally {
      clearTimeout(timer)
    }
  }

  /** Ends the server with SIGKILL at once, as a crash would, and waits until it has exited. */
  async crash(): Promise<void> {
    this.killNow()
    await this.exited
  }

  /** Sends SIGKILL without waiting, for 'exit' handlers that cannot await. */
  killNow(): void {
    if (!this.#hasExited) this.#child.kill('SIGKILL')
  }
}
