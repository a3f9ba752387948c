import { spawn } from 'node:child_process'
import { commandLine } from './command-line.js'
import { OutputTail } from './output-tail.js'

/** How a finished command ended. */
export interface CommandResult {
  /** Exit code, or null when a signal (or the timeout) ended it. */
  readonly code: number | null
  /** stdout and stderr interleaved, last part only. */
  readonly output: string
  /** The command as a shell-readable line. */
  readonly line: string
}

/** Options of runCommand. */
export interface RunCommandOptions {
  readonly cwd?: string
  readonly timeoutMs?: number
}

/** Runs a command to completion, never rejecting for a non-zero exit: callers decide what failure means. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: RunCommandOptions = {},
): Promise<CommandResult> {
  const line = commandLine(command, args)
  const output = new OutputTail()
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
      killSignal: 'SIGKILL',
    })
    child.stdout.on('data', (chunk: Buffer) => output.append(chunk))
    child.stderr.on('data', (chunk: Buffer) => output.append(chunk))
    child.once('error', (error) => {
      output.append(`${error.message}\n`)
      resolve({ code: null, output: output.toString(), line })
    })
    child.once('close', (code) => resolve({ code, output: output.toString(), line }))
  })
}
