import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'

/** A command started from an installed app, its output kept for assertions and failure messages. */
export interface StartedCommand {
  readonly child: ChildProcess
  output(): string
  /** Resolves with the exit code (or 1 for a signal) once the process has ended. */
  exited(): Promise<number>
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>
}

/** Starts `command` with exactly `env` (a user's shell would not carry the test runner's variables either). */
export function startCommand(command: string, args: string[], env: Record<string, string>): StartedCommand {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  const chunks: string[] = []
  child.stdout?.on('data', (chunk) => chunks.push(String(chunk)))
  child.stderr?.on('data', (chunk) => chunks.push(String(chunk)))
  const ended = once(child, 'exit').then(([code]) => (typeof code === 'number' ? code : 1))
  return {
    child,
    output: () => chunks.join(''),
    exited: () => ended,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return ended
    },
  }
}

/** Polls `probe` until it resolves true; fails with the command's output when `started` ends or time runs out. */
export async function waitUntil(
  started: StartedCommand,
  probe: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await probe().catch(() => false)) return
    if (started.child.exitCode !== null) throw new Error(`exited before ${what}:\n${started.output()}`)
    if (Date.now() > deadline) throw new Error(`not ${what} after ${timeoutMs} ms:\n${started.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
